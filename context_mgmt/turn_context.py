"""Per-turn context (MOIM): a small block the model sees after the last message.

It carries what changes between turns: the time (minute granularity, fixed for the whole
turn), the working dir, how full the context is, the todo list and the turn budget. It is
added to the request only (never persisted), after the last message: as its own trailing
user message of kind `TURN_CONTEXT_KIND` after tool results, inside the user's own message
otherwise (see `with_turn_context`). The block changes from
call to call, so it must stay out of the cached prefix: every earlier message is sent
byte-identical on the next call, and the Anthropic adapter puts its last cache breakpoint on
the message before the block (the wire merges the block into the same user turn, after the
tool results). Inside the last message it would sit under that breakpoint, and every tool
output would be written to the cache twice (once with the block, once without).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from xml.sax.saxutils import escape

from gosling.context_mgmt.context_size import usage_percent
from gosling.conversation import TURN_CONTEXT_KIND, Message, TextContent

MIN_CONTEXT_FOR_TURN_CONTEXT = 32_000


@dataclass(frozen=True)
class TurnContext:
    """Inputs of the block; build once per turn so the time stays byte-stable."""

    now: datetime
    working_dir: str
    context_tokens: int | None = None
    context_limit: int | None = None
    threshold: float | None = None
    todo: str = ""
    turns_taken: int = 0
    max_turns: int = 0


def format_turn_context(ctx: TurnContext) -> str | None:
    """The block's text, or None when the window is too small to spend tokens on it."""
    if ctx.context_limit is not None and ctx.context_limit < MIN_CONTEXT_FOR_TURN_CONTEXT:
        return None
    lines = [
        "<turn-context>",
        f"time: {ctx.now.strftime('%Y-%m-%d %H:%M %Z').strip()}",
        f"working directory: {escape(ctx.working_dir)}",
    ]
    usage = _context_usage(ctx)
    if usage:
        lines.append(usage)
    if ctx.max_turns > 0 and 2 * ctx.turns_taken >= ctx.max_turns:
        lines.append(f"turn budget: {ctx.turns_taken}/{ctx.max_turns} model calls used")
    if ctx.todo.strip():
        lines.append("todo:")
        lines.append(escape(ctx.todo.strip()))
    lines.append("</turn-context>")
    return "\n".join(lines)


def _context_usage(ctx: TurnContext) -> str:
    tokens, limit = ctx.context_tokens, ctx.context_limit
    if not tokens or not limit or tokens <= 0 or limit <= 0:
        return ""
    percent = usage_percent(tokens, limit)
    text = f"context: ~{tokens // 1000}k/{limit // 1000}k tokens used ({percent}%)"
    threshold = ctx.threshold
    if threshold is not None and 0 < threshold < 1:
        at = int(limit * threshold)
        if tokens * 2 >= at:
            remaining = max(at - tokens, 0) // 1000
            text += f"; ~{remaining}k tokens left before older context is compacted"
    return text


def with_turn_context(view: Sequence[Message], block: str | None) -> list[Message]:
    """The request's messages with `block` after the last one. After tool results (or an
    assistant message) it is its own user message of kind `TURN_CONTEXT_KIND`, so the tool
    results are sent exactly as on the next call; after the user's own text it joins that
    message (two user messages in a row are not a valid conversation; the cache loses only
    that short message). The input is not modified."""
    messages = list(view)
    if not block or not messages:
        return messages
    last = messages[-1]
    if last.effective_role == "user":
        messages[-1] = last.with_content((*last.content, TextContent(text=block)))
    else:
        messages.append(Message.user(block).with_kind(TURN_CONTEXT_KIND))
    return messages
