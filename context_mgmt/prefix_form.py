"""The prefix form of a compaction call: summarize on the session's own cached prefix.

The transcript form renders the history into a new system prompt, so every token of it is a
cache miss. The prefix form sends the request as it was last sent (system prompt, tool
schemas, messages as the model saw them, masking included) and puts the compaction request
last, where the turn-context block was: the provider's prompt cache serves everything
before it. Tools stay in the request only so the prefix matches; the request says not to
call them, and a reply that does gets `summarize`'s corrective retry.

On overflow, tool-result contents are blanked (pairs, roles and order stay valid), in the
removal ladder's middle-out order, skipping rungs that would resend the same bytes; when
even that does not fit, `summarize` falls back to the transcript form.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from gosling.context_mgmt.ladder import removal_order
from gosling.context_mgmt.turn_context import with_turn_context
from gosling.conversation import Message, TextContent, ToolResponse
from gosling.providers import ToolSpec

CompactionForm = Literal["transcript", "prefix"]
BLANKED_RESULT = "[output left out of the summary request to fit the context window]"


@dataclass(frozen=True)
class SessionPrefix:
    """The request as the session last sent it, without its turn-context block."""

    system: str
    tools: Sequence[ToolSpec]
    messages: Sequence[Message]


def tool_result_positions(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """(message index, part index) of every tool response with content to blank."""
    return [
        (i, j)
        for i, message in enumerate(messages)
        for j, part in enumerate(message.content)
        if isinstance(part, ToolResponse) and part.content
    ]


def blank_tool_results(messages: Sequence[Message], percent: int) -> list[Message]:
    """`messages` with `percent`% of the tool results' contents replaced by a short note,
    middle first (the ladder's order); the responses themselves stay, so every call keeps
    its answer."""
    positions = tool_result_positions(messages)
    count = blanked_count(len(positions), percent)
    if not count:
        return list(messages)
    chosen = [positions[k] for k in removal_order(len(positions))[:count]]
    by_message: dict[int, set[int]] = {}
    for i, j in chosen:
        by_message.setdefault(i, set()).add(j)
    blanked = list(messages)
    note = (TextContent(text=BLANKED_RESULT),)
    for i, parts in by_message.items():
        content = tuple(
            p.model_copy(update={"content": note})
            if k in parts and isinstance(p, ToolResponse)
            else p
            for k, p in enumerate(blanked[i].content)
        )
        blanked[i] = blanked[i].with_content(content)
    return blanked


def blanked_count(results: int, percent: int) -> int:
    """How many of `results` tool results the `percent` rung blanks (at least one, once any
    are to go)."""
    if percent <= 0 or not results:
        return 0
    return max(1, results * percent // 100)


def with_request(messages: Sequence[Message], request: str) -> list[Message]:
    """The messages with the compaction request last, placed as the turn-context block is
    (its own user message after tool results or a reply, joined to the user's own text)."""
    return with_turn_context(messages, request)
