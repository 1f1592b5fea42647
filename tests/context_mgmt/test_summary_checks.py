"""A summary is checked before it is used (issue 27 items 2, 3, 8): a reply that calls a tool
or is empty gets one corrective retry on the same request, a summary larger than what it
replaces is refused, an earlier summary is merged as a checkpoint, and the summarizer's
deadline grows with its input."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from gosling.agent.agent import Agent
from gosling.agent.config import Settings
from gosling.agent.events import CompactionFinished, CompactionRefused, Event
from gosling.context_mgmt import CompactionFailed, CompactionTemplates, compact_messages, summarize
from gosling.context_mgmt.summarize import CORRECTIVE_REQUEST, NOT_RUN_RESULT
from gosling.context_mgmt.summary_deadline import SummaryDeadline
from gosling.conversation import Message, ToolResponse
from gosling.providers import ModelConfig, ScriptedProvider, ScriptedReply, ScriptedRequest, Usage
from gosling.providers.deadlines import CallDeadlines, Deadline, request_deadline
from gosling.providers.errors import TimedOut
from gosling.providers.testing import ScriptedToolCall
from gosling.sessions.records import UsageKind, UsageRecord

from .builders import STRUCTURED_REPLY, tool_session

BILLED = Usage(input_tokens=1_000, output_tokens=30)


def _tool_call(call_id: str = "t1") -> ScriptedReply:
    return ScriptedReply(
        tool_calls=[ScriptedToolCall("shell", {"command": "ls"}, id=call_id)], usage=BILLED
    )


def _summary_reply(text: str = STRUCTURED_REPLY) -> ScriptedReply:
    return ScriptedReply(text=text, usage=Usage(input_tokens=1_100, output_tokens=200))


async def test_a_tool_calling_reply_is_retried_once_extending_the_same_request() -> None:
    tool_call = _tool_call()
    provider = ScriptedProvider([tool_call, _summary_reply()])
    summary = await summarize(provider, tool_session(2))

    first, retry = provider.requests
    assert retry.system == first.system  # the same cached prompt
    assert retry.messages[: len(first.messages)] == first.messages  # extended, not replaced
    assert "you called a tool" in retry.messages[-1].text
    assert "without calling any tool" in retry.messages[-1].text
    assert retry.tools == () and not any(m.tool_requests for m in retry.messages)
    assert summary.structured is not None and summary.rejected_replies == 1
    # The rejected attempt was billed, so it is counted.
    assert summary.usage.input_tokens == 2_100 and summary.usage.output_tokens == 230
    assert summary.requests == 2


async def test_an_empty_reply_is_retried_once_and_its_usage_counted() -> None:
    empty = ScriptedReply(thinking="hmm", usage=BILLED)
    provider = ScriptedProvider([empty, _summary_reply()])
    summary = await summarize(provider, tool_session(1))
    assert "it was empty" in provider.requests[1].messages[-1].text
    assert summary.message.text.startswith("# Conversation Summary")
    assert summary.usage.input_tokens == 2_100


async def test_a_second_tool_call_fails_with_the_usage_of_both_attempts() -> None:
    call = _tool_call()
    with pytest.raises(CompactionFailed, match="called a tool instead") as failure:
        await summarize(ScriptedProvider([call, call]), tool_session(1))
    assert failure.value.reason == "tool_call_summary"
    assert failure.value.requests == 2
    assert failure.value.usage.input_tokens == 2_000


async def test_with_tools_in_the_request_the_call_is_answered_as_not_run() -> None:
    """The corrective turn keeps every pair valid when the request carries tools."""
    from gosling.context_mgmt.summarize import _Calls
    from gosling.context_mgmt.tokens import default_counter
    from gosling.providers import ToolSpec

    call = _tool_call("t1")
    provider = ScriptedProvider([call, "the summary"])
    calls = _Calls(provider, default_counter(), SummaryDeadline())
    tools = [ToolSpec("shell", "run a command")]
    reply, _ = await calls.valid_reply("system", [Message.user("summarize")], tools)
    assert reply.text == "the summary"
    assistant, answer = provider.requests[1].messages[1:]
    assert [r.id for r in assistant.tool_requests] == ["t1"]
    (response,) = [p for p in answer.content if isinstance(p, ToolResponse)]
    assert response.id == "t1" and response.is_error
    assert NOT_RUN_RESULT in response.content[0].model_dump()["text"]
    assert CORRECTIVE_REQUEST.format(why=" (you called a tool)") in answer.text


# -- oversized summaries ----------------------------------------------------------------------


async def test_a_summary_larger_than_the_history_is_refused() -> None:
    history = [Message.user("hi"), Message.assistant("hello"), Message.user("go on")]
    bloated = "padding " * 400
    with pytest.raises(CompactionFailed, match="more than the ~") as failure:
        await compact_messages(
            ScriptedProvider([_summary_reply(bloated)]), history, refuse_larger=True
        )
    assert failure.value.reason == "summary_too_large"
    assert failure.value.usage.output_tokens == 200


async def test_the_pipeline_keeps_the_history_says_so_and_bills_the_attempt(
    tmp_path: Path,
) -> None:
    history = [Message.user("hi"), Message.assistant("hello"), Message.user("go on")]
    provider = ScriptedProvider(
        [_summary_reply("padding " * 400)], model_config=ModelConfig("m", context_limit=100)
    )
    agent = Agent(provider, config=Settings(), working_dir=tmp_path)
    session = agent.open_session(history)
    before = list(session.messages)
    billed: list[UsageRecord] = []
    commit = session.commit

    def recording_commit(**changes: Any) -> None:
        billed.extend(changes.get("usage", ()))
        commit(**changes)

    session.commit = recording_commit  # type: ignore[method-assign]

    events: list[Event] = [e async for e in session.pipeline.compact(session, trigger="threshold")]

    (refused,) = [e for e in events if isinstance(e, CompactionRefused)]
    assert "was not used and the history was kept" in refused.text
    assert refused.to_json()["type"] == "compaction_refused"
    assert not any(isinstance(e, CompactionFinished) for e in events)
    assert session.messages == before
    (record,) = billed
    assert record.kind is UsageKind.COMPACTION and record.usage.output_tokens == 200
    # The threshold check stands down instead of paying for the same refusal every call.
    check = session.pipeline.check(session.view.request_messages(session.messages))
    assert not check.compact


# -- chained compactions ----------------------------------------------------------------------


async def test_a_chained_compaction_passes_the_prior_summary_as_the_checkpoint() -> None:
    first = await compact_messages(
        ScriptedProvider([STRUCTURED_REPLY]),
        [Message.user("Fix the parser bug"), Message.assistant("Looking")],
    )
    earlier = first.summary.message.text
    provider = ScriptedProvider([STRUCTURED_REPLY])
    await compact_messages(provider, [*first.messages, Message.user("now the lexer")])

    system = provider.requests[0].system
    checkpoint = system.split("<previous-notes>\n", 1)[1].split("\n</previous-notes>", 1)[0]
    assert checkpoint == earlier
    assert "carry\nforward everything in the earlier notes that still holds" in system
    transcript = system.split("<conversation>", 1)[1].split("</conversation>", 1)[0]
    assert "# Conversation Summary" not in transcript  # not summarized as a message
    assert "[Context compacted]" not in checkpoint  # the note to the model is not carried
    assert '"now the lexer"' in transcript


async def test_a_template_without_the_checkpoint_keeps_the_prior_summary_inline() -> None:
    first = await compact_messages(
        ScriptedProvider([STRUCTURED_REPLY]), [Message.user("a"), Message.assistant("b")]
    )
    provider = ScriptedProvider([STRUCTURED_REPLY])
    templates = CompactionTemplates(compaction="Summarize:\n{{ messages }}")
    await compact_messages(provider, [*first.messages, Message.user("c")], templates=templates)
    assert "# Conversation Summary" in provider.requests[0].system


# -- deadline ---------------------------------------------------------------------------------


def test_the_deadline_scales_with_the_input_between_floor_and_cap() -> None:
    deadline = SummaryDeadline(floor=120, cap=1800)
    assert deadline.seconds(10_000) == 120
    assert deadline.seconds(160_000) == 320
    assert deadline.seconds(2_000_000) == 1800
    with pytest.raises(ValueError, match="compaction_timeout_floor"):
        SummaryDeadline(floor=900, cap=60)


class _HungProvider(ScriptedProvider):
    async def complete(self, system, messages, tools=(), *, fast=False):  # type: ignore[no-untyped-def]
        self.requests.append(ScriptedRequest(system, tuple(messages), tuple(tools), fast, False))
        await asyncio.Event().wait()
        raise AssertionError("never set")


async def test_a_hung_summarizer_fails_at_its_scaled_deadline() -> None:
    deadline = SummaryDeadline(floor=0.08, cap=0.15)
    bare = CompactionTemplates(compaction="{{ messages }}")
    with pytest.raises(CompactionFailed, match=r"within 0\.08 s") as small:
        await summarize(_HungProvider(), [Message.user("short")], deadline=deadline, templates=bare)
    assert small.value.reason == "timed_out"
    with pytest.raises(CompactionFailed, match=r"within 0\.15 s \(the deadline for ~5,0") as big:
        await summarize(
            _HungProvider(), [Message.user("word " * 5_000)], deadline=deadline, templates=bare
        )
    assert "compaction_timeout_cap in config" in str(big.value)


async def test_the_summary_deadline_replaces_the_providers_request_timeout() -> None:
    """The provider's own whole-attempt clock follows the summarizer's deadline, so a
    600 s request_timeout neither cuts a large summary short nor outlasts a small cap."""
    never = asyncio.get_running_loop().create_future()
    with request_deadline(0.02, setting="compaction_timeout_cap"):
        clock = Deadline(CallDeadlines(request=600), provider="p")
    with pytest.raises(TimedOut, match=r"within 0\.02 s \(compaction_timeout_cap"):
        await clock.whole(never)
    assert Deadline(CallDeadlines(request=600), provider="p")._deadlines.request == 600
