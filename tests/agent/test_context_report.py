"""`/context`: tokens by kind add up to the request, and the compaction outlook is right."""

from __future__ import annotations

import math
from pathlib import Path

from gosling.agent.context_report import (
    SUMMARY_ESTIMATE_TOKENS,
    build_context_report,
    format_context_report,
    report_for_agent,
)
from gosling.context_mgmt.tokens import default_counter
from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse
from gosling.providers import ToolSpec, Usage
from gosling.providers.testing import ScriptedReply
from tests.agent.loop_helpers import make_agent, run_turn

HINTS = "Run `make check` before committing. Never touch vendor/."
SYSTEM = f"You are gosling.\n\n# Project hints\n{HINTS}\n"
TOOLS = [
    ToolSpec(
        "developer__shell",
        "Run a shell command.",
        {"type": "object", "properties": {"command": {"type": "string"}}},
    )
]


def conversation() -> list[Message]:
    call = ToolRequest(id="c1", name="developer__shell", arguments={"command": "ls"})
    listing = "\n".join(f"file_{i}.py" for i in range(200))
    return [
        Message.user("what files are there?"),
        Message.assistant("Let me look.", call),
        Message(
            role="user", content=(ToolResponse(id="c1", content=(TextContent(text=listing),)),)
        ),
        Message.user("# Hints from pkg/AGENTS.md\nUse tabs.").agent_only().with_kind("hints"),
        Message.assistant("There are 200 Python files."),
        Message.user("an old question").with_agent_invisible(),
    ]


def test_rows_add_up_to_the_request_and_sort_tokens_by_kind() -> None:
    counter = default_counter()
    messages = conversation()
    report = build_context_report(
        system_prompt=SYSTEM,
        hints_text=HINTS,
        messages=messages,
        tool_specs=TOOLS,
        counter=counter,
        context_limit=10_000,
        threshold=0.8,
    )
    assert report.estimated_tokens == counter.count_chat(SYSTEM, messages, TOOLS)
    assert report.estimated_tokens == sum(row.tokens for row in report.rows)
    assert report.tokens_of("hints") == counter.count_text(HINTS) + counter.count_message(
        messages[3]
    )
    assert report.tokens_of("tool results") == counter.count_message(messages[2])
    assert report.tokens_of("tool results") > report.tokens_of("messages")
    assert report.tokens_of("tool schemas") == counter.count_tools(TOOLS)
    assert report.tokens_of("summaries") == 0
    assert report.current_tokens == report.estimated_tokens  # nothing reported yet


def test_compaction_outlook_counts_down_to_the_threshold() -> None:
    counter = default_counter()
    report = build_context_report(
        system_prompt=SYSTEM,
        hints_text=HINTS,
        messages=conversation(),
        tool_specs=TOOLS,
        counter=counter,
        context_limit=10_000,
        threshold=0.8,
        current_tokens=3_000,
        current_source="reported",
    )
    outlook = report.compaction
    assert outlook.automatic and outlook.threshold_tokens == math.floor(10_000 * 0.8)
    assert outlook.tokens_until == 8_000 - 3_000
    assert outlook.messages_to_summarize == 5  # the agent-invisible one is already gone
    in_messages = sum(
        report.tokens_of(label) for label in ("messages", "tool results", "summaries")
    ) + counter.count_message(conversation()[3])
    assert outlook.tokens_to_summarize == in_messages
    # ~1k tokens of messages are no bigger than their summary: /compact would keep it all,
    # and says so instead of forecasting more than there is.
    assert in_messages < SUMMARY_ESTIMATE_TOKENS
    assert outlook.retained_estimate == 3_000
    text = format_context_report(report)
    assert "5,000 tokens to go" in text
    assert "would not make the context smaller: its 5 messages" in text


def test_compaction_forecast_keeps_less_than_the_current_context() -> None:
    counter = default_counter()
    long_talk = [*conversation(), Message.user("design notes " * 4_000)]
    report = build_context_report(
        system_prompt=SYSTEM,
        hints_text=HINTS,
        messages=long_talk,
        tool_specs=TOOLS,
        counter=counter,
        context_limit=100_000,
        threshold=0.8,
        current_tokens=12_000,
        current_source="reported",
    )
    outlook = report.compaction
    saved = 12_000 - outlook.retained_estimate
    summary = outlook.tokens_to_summarize - saved  # what replaces the messages
    assert SUMMARY_ESTIMATE_TOKENS <= summary < SUMMARY_ESTIMATE_TOKENS + 200
    text = format_context_report(report)
    assert f"keep ~{outlook.retained_estimate:,} of ~12,000 tokens" in text


def test_outlook_says_why_nothing_compacts_automatically() -> None:
    common = {
        "system_prompt": SYSTEM,
        "hints_text": HINTS,
        "messages": conversation(),
        "tool_specs": TOOLS,
        "counter": default_counter(),
        "context_limit": 10_000,
    }
    off = build_context_report(threshold=0.0, **common)  # type: ignore[arg-type]
    assert not off.compaction.automatic and off.compaction.tokens_until is None
    assert "auto_compact_threshold is off" in format_context_report(off)
    masked = build_context_report(threshold=0.8, compacts_at_threshold=False, **common)  # type: ignore[arg-type]
    assert "only on overflow" in format_context_report(masked)
    over = build_context_report(threshold=0.8, current_tokens=9_000, **common)  # type: ignore[arg-type]
    assert "compacts before the next model call" in format_context_report(over)


async def test_report_of_a_live_agent_leaves_its_view_alone(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "AGENTS.md").write_text(HINTS + "\n")
    agent, provider, _ = make_agent(
        tmp_path,
        [
            ScriptedReply.tool_call("developer__shell", {"command": "echo hi"}),
            ScriptedReply(text="It said hi.", usage=Usage(input_tokens=500, output_tokens=5)),
            "Second answer.",
        ],
    )
    session = agent.new_session()
    before = report_for_agent(agent, session)
    assert before.tokens_of("hints") >= default_counter().count_text(HINTS)
    assert before.tokens_of("messages") == 0 and before.compaction.messages_to_summarize == 0
    await run_turn(agent, session, "say hi")
    report = report_for_agent(agent, session)
    assert (report.current_source, report.current_tokens) == ("reported", 505)
    assert report.tokens_of("tool results") > 0
    assert report.compaction.messages_to_summarize == 4
    # The report must not repair the view: the next request still carries the last reply.
    await run_turn(agent, session, "again")
    assert [m.text for m in provider.requests[-1].messages][-2] == "It said hi."


def _old_outputs(calls: int) -> list[Message]:
    messages = [Message.user("Fix the failing tests.")]
    for n in range(calls):
        request = ToolRequest(id=f"c{n}", name="developer__shell", arguments={"command": "ls"})
        text = f"c{n} " + "listing line\n" * 400
        messages.append(Message.assistant(None, request))
        messages.append(
            Message.user(None, ToolResponse(id=f"c{n}", content=(TextContent(text=text),)))
        )
    return messages


def test_context_says_what_trimming_old_output_would_save_and_when_it_pays(
    tmp_path: Path,
) -> None:
    agent, _, _ = make_agent(tmp_path, [], prompt_cache="anthropic")
    session = agent.open_session(_old_outputs(12))
    text = format_context_report(report_for_agent(agent, session))
    line = next(x for x in text.splitlines() if x.startswith("Old tool output:"))
    assert "could be masked or folded now" in line and "pays back after" in line
    trim = report_for_agent(agent, session).trim
    assert trim is not None and trim.saved_tokens > 0 and trim.resent_tokens > 0
    # Nothing was trimmed by looking.
    assert not any(m.metadata.masked for m in session.messages)
    (tmp_path / "free").mkdir()
    (tmp_path / "s").mkdir()
    free, _, _ = make_agent(tmp_path / "free", [], prompt_cache="none")
    text = format_context_report(report_for_agent(free, free.open_session(_old_outputs(12))))
    assert "no prompt cache to lose" in text
    summarizing, _, _ = make_agent(tmp_path / "s", [], context_strategy="summarize")
    report = report_for_agent(summarizing, summarizing.open_session(_old_outputs(12)))
    assert report.trim is None
