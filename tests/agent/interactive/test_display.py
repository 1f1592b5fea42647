"""What the session shows: status line, tool lines, folded results, colour or not, resume."""

from __future__ import annotations

import io
from dataclasses import replace
from typing import Any

import pytest

from gosling.agent.cli.interactive import render
from gosling.agent.cli.interactive.render import Renderer, describe_call, fold_output
from gosling.agent.cli.interactive.status import StatusInfo, compact_number, status_text
from gosling.agent.cli.interactive.terminal import Terminal, wants_style
from gosling.agent.cli.interactive.transcript import recent_exchanges
from gosling.agent.events import (
    CompactionFinished,
    ContextTrimmed,
    MessageAdded,
    TextDelta,
    ToolCall,
    TurnFinished,
    UsageUpdate,
)
from gosling.conversation import Message, MessageMetadata, TextContent, ToolRequest, ToolResponse
from gosling.providers import Usage
from tests.agent.interactive.vt import screen_lines


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def status(**changes: Any) -> StatusInfo:
    return replace(StatusInfo("claude-x", "approve", 12_345, 200_000, 0.8), **changes)


def test_status_line_shows_model_mode_usage_and_distance_to_compaction() -> None:
    assert status_text(status()) == (
        "claude-x · approve · 12.3k/200k tokens (6%) · compacts in 147.7k"
    )
    assert status_text(status(context_tokens=170_000)).endswith("compacts on the next call")
    assert status_text(status(auto_compact=False)).endswith("auto-compact off")
    assert status_text(status(threshold=0.0)).endswith("auto-compact off")


def test_status_line_fits_the_width_dropping_detail_before_the_model() -> None:
    full = status_text(status())
    assert status_text(status(), width=200) == full
    assert status_text(status(), width=len(full)) == full
    assert status_text(status(), width=45) == "claude-x · approve · 12.3k/200k tokens (6%)"
    assert status_text(status(), width=25) == "claude-x · approve · 6%"
    assert status_text(status(), width=16) == "claude-x · 6%"
    long_model = status(model="claude-sonnet-4-6-a-long-deployment-name")
    assert status_text(long_model, width=20) == "claude-sonnet-… · 6%"
    for width in range(8, 90):
        assert len(status_text(long_model, width=width)) <= width


def test_status_percentage_rounds_half_up_like_goose() -> None:
    half = status(context_tokens=2_500, context_limit=100_000)
    assert "2.5k/100k tokens (3%)" in status_text(half)


def test_status_follows_usage_and_compaction_events() -> None:
    info = status().after(UsageUpdate(Usage(input_tokens=90_000), 90_500, 200_000))
    assert info.context_tokens == 90_500
    info = info.after(CompactionFinished("manual", 90_500, 4_000, True))
    assert info.context_tokens == 4_000
    assert info.after(TextDelta("hi")) is info


@pytest.mark.parametrize(
    ("n", "shown"), [(999, "999"), (1_000, "1k"), (12_345, "12.3k"), (1_250_000, "1.2M")]
)
def test_compact_numbers(n: int, shown: str) -> None:
    assert compact_number(n) == shown


def test_tool_calls_fit_on_one_line() -> None:
    assert describe_call("developer__shell", {"command": "ls\n  -la"}) == "developer__shell  ls -la"
    assert describe_call("developer__view", {"path": "a.py", "view_range": [1, 5]}) == (
        "developer__view  path=a.py, view_range=[1, 5]"
    )
    long = describe_call("t", {"text": "x" * 500}, limit=20)
    assert len(long) == len("t  ") + 20 and long.endswith("…")


def test_long_outputs_fold_with_a_line_count() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 31))
    shown, hidden = fold_output(text, max_lines=4)
    assert shown == ["line 1", "line 2", "line 3", "line 4"]
    assert hidden == 26
    assert fold_output("", max_lines=4) == ([], 0)
    assert fold_output("one\n", max_lines=4) == (["one"], 0)


@pytest.mark.parametrize(
    ("tty", "env", "styled"),
    [
        (True, {}, True),
        (True, {"NO_COLOR": "1"}, False),
        (True, {"TERM": "dumb"}, False),
        (False, {}, False),
    ],
)
def test_colour_only_on_a_terminal_that_wants_it(
    tty: bool, env: dict[str, str], styled: bool
) -> None:
    stream = FakeTty() if tty else io.StringIO()
    assert wants_style(stream, env) is styled


def turn_events() -> list[object]:
    request = ToolRequest(id="t1", name="developer__shell", arguments={"command": "seq 1 40"})
    output = "\n".join(str(i) for i in range(1, 41))
    return [
        TextDelta("Counting "),
        TextDelta("now."),
        MessageAdded(Message.assistant("Counting now.", request)),
        ToolCall("t1", "developer__shell", {"command": "seq 1 40"}),
        MessageAdded(
            Message(
                role="user",
                content=(ToolResponse(id="t1", content=(TextContent(text=output),)),),
            )
        ),
        TurnFinished("cancelled", 1, "", Usage()),
    ]


def test_plain_output_streams_text_and_folds_tool_results_without_colour() -> None:
    out = io.StringIO()
    renderer = Renderer(Terminal(out, styled=False, width=80))
    renderer.begin_turn()
    for event in turn_events():
        renderer.event(event)  # type: ignore[arg-type]
    renderer.end_turn()
    text = out.getvalue()
    assert "\x1b[" not in text
    assert text.startswith("Counting now.\n● developer__shell  seq 1 40\n  ⎿  1\n")
    assert "… 35 more lines" in text and "\n     6\n" not in text
    assert "Interrupted" in text


@pytest.mark.parametrize("every_delta", [True, False], ids=["each-delta", "throttled"])
def test_styled_output_renders_markdown_once_in_colour(
    every_delta: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if every_delta:
        monkeypatch.setattr(render, "REFRESH_SECONDS", 0.0)
    out = FakeTty()
    renderer = Renderer(Terminal(out, styled=True, width=80))
    renderer.begin_turn()
    for chunk in ["# Plan\n\n", "Use **bold** ", "words.\n\n", "```py\nx = 1\n```\n"]:
        renderer.event(TextDelta(chunk))
    renderer.event(MessageAdded(Message.assistant("...")))
    renderer.end_turn()
    raw = out.getvalue()
    assert "\x1b[" in raw
    screen = [line.strip() for line in screen_lines(raw) if line.strip()]
    assert screen == ["Plan", "Use bold words.", "x = 1"]  # rendered once, spinner gone


def test_resume_shows_the_last_exchanges_the_user_saw() -> None:
    hidden = MessageMetadata(user_visible=True, agent_visible=False)
    messages = [
        Message.user("first question"),
        Message.assistant("first answer"),
        Message.user("second question").with_metadata(hidden),
        Message.assistant(
            "let me check",
            ToolRequest(id="c1", name="developer__shell", arguments={"command": "ls"}),
        ),
        Message(role="user", content=(ToolResponse(id="c1", content=(TextContent(text="a"),)),)),
        Message.user("summary for the model").agent_only().with_kind("summary"),
        Message.assistant("second answer"),
        Message.user("/clear").user_only().with_kind("command"),
        Message.assistant("Conversation cleared").user_only().with_kind("command"),
        Message.user("third question"),
        Message.assistant("third answer"),
    ]
    recent = recent_exchanges(messages, exchanges=3)
    assert recent.earlier_exchanges == 1
    assert [(e.kind, e.text) for e in recent.entries] == [
        ("user", "second question"),
        ("assistant", "let me check"),
        ("tool", "developer__shell  ls"),
        ("assistant", "second answer"),
        ("command", "/clear"),
        ("command_reply", "Conversation cleared"),
        ("user", "third question"),
        ("assistant", "third answer"),
    ]
    assert recent_exchanges([], 3).entries == ()


def test_trimming_events_say_what_was_masked_folded_or_summarized() -> None:
    out = io.StringIO()
    renderer = Renderer(Terminal(out, styled=False, width=100))
    renderer.begin_turn()
    renderer.event(ContextTrimmed("mask", ["c1", "c2"]))
    renderer.event(ContextTrimmed("fold", ["c0"]))
    renderer.event(ContextTrimmed("summarize", ["c3", "c4", "c5"]))
    renderer.end_turn()
    lines = out.getvalue().splitlines()
    assert "⋯ masked 2 old tool results to save context" in lines
    assert "⋯ folded 1 old tool call into one note to save context" in lines
    assert "⋯ summarized 3 old tool results to save context" in lines
