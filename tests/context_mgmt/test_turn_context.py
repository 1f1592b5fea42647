"""The per-turn context block: what it says, when it is skipped, and where it goes."""

from __future__ import annotations

from datetime import UTC, datetime

from gosling.context_mgmt.turn_context import TurnContext, format_turn_context, with_turn_context
from gosling.conversation import (
    TURN_CONTEXT_KIND,
    Message,
    TextContent,
    ToolRequest,
    ToolResponse,
    fix_conversation,
)

NOW = datetime(2026, 11, 29, 22, 51, 37, tzinfo=UTC)


def test_block_has_minute_time_and_working_dir() -> None:
    block = format_turn_context(
        TurnContext(now=NOW, working_dir="/repo <x>", context_limit=200_000)
    )
    assert block is not None
    assert block.startswith("<turn-context>\n") and block.endswith("\n</turn-context>")
    assert "time: 2026-11-29 22:51 UTC" in block
    assert ":37" not in block
    assert "working directory: /repo &lt;x&gt;" in block


def test_usage_line_and_remaining_once_past_half_of_the_threshold() -> None:
    early = TurnContext(NOW, "/r", context_tokens=20_000, context_limit=200_000, threshold=0.8)
    text = format_turn_context(early) or ""
    assert "context: ~20k/200k tokens used (10%)" in text
    assert "left before" not in text
    late = TurnContext(NOW, "/r", context_tokens=100_000, context_limit=200_000, threshold=0.8)
    assert "~60k tokens left before older context is compacted" in (format_turn_context(late) or "")


def test_usage_percentage_rounds_half_away_from_zero_like_goose() -> None:
    half = TurnContext(NOW, "/r", context_tokens=2_500, context_limit=100_000)
    assert "tokens used (3%)" in (format_turn_context(half) or "")
    below = TurnContext(NOW, "/r", context_tokens=2_499, context_limit=100_000)
    assert "tokens used (2%)" in (format_turn_context(below) or "")
    odd = TurnContext(NOW, "/r", context_tokens=64_500, context_limit=100_000)
    assert "tokens used (65%)" in (format_turn_context(odd) or "")


def test_turn_budget_only_near_the_limit() -> None:
    assert "turn budget" not in (
        format_turn_context(TurnContext(NOW, "/r", turns_taken=4, max_turns=10)) or ""
    )
    near = format_turn_context(TurnContext(NOW, "/r", turns_taken=5, max_turns=10)) or ""
    assert "turn budget: 5/10 model calls used" in near


def test_todo_is_included() -> None:
    block = (
        format_turn_context(TurnContext(NOW, "/r", todo="- [ ] write tests\n- [x] read code")) or ""
    )
    assert "todo:\n- [ ] write tests\n- [x] read code" in block


def test_skipped_for_small_windows() -> None:
    assert format_turn_context(TurnContext(NOW, "/r", context_limit=16_000)) is None


def test_added_as_a_trailing_message_and_input_untouched() -> None:
    call = ToolRequest(id="c", name="shell")
    view = [
        Message.user("run it"),
        Message.assistant(None, call),
        Message.user(None, ToolResponse(id="c", content=(TextContent(text="ok"),))),
    ]
    before = list(view)
    out = with_turn_context(view, "<turn-context>\nx\n</turn-context>")
    assert view == before
    # every message of the view is sent unchanged (the cached prefix); the block follows
    assert out[:3] == view
    assert len(out) == 4 and out[-1].role == "user"
    assert out[-1].content == (TextContent(text="<turn-context>\nx\n</turn-context>"),)
    assert out[-1].metadata.kind == TURN_CONTEXT_KIND
    assert fix_conversation(out)[1] == []
    assert with_turn_context(view, None) == view


def test_after_the_users_text_the_block_joins_that_message() -> None:
    view = [Message.user("hello")]
    out = with_turn_context(view, "<turn-context>\nx\n</turn-context>")
    assert len(out) == 1 and out[0].text.startswith("hello")
    assert out[0].content[-1] == TextContent(text="<turn-context>\nx\n</turn-context>")
    assert fix_conversation(out)[1] == []
