"""Tool-pair summarization: old tool calls and their results become one-line model summaries
(reference §7, generation T4).

Three pure decisions and one model call:

- `compute_tool_call_cutoff` — how many tool calls stay verbatim, from the context window;
- `tool_ids_to_summarize` — which calls to summarize now: the oldest batch of ten, once more
  than `cutoff + 10` calls (not counting the current turn's) are in the agent's view;
- `summarize_tool_pair` — one fast-model call turning a call and its result into a note;
- `plan_tool_pair_summaries` / `apply_tool_pair_summaries` — hide summarized pairs and add
  the notes to the agent's view (see `context_mgmt.pair_apply` for where they go and why).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from context_mgmt.format import format_message_for_compacting
from context_mgmt.pair_apply import (
    TOOL_SUMMARY_KIND,
    PairApplication,
    PairStatus,
    apply_tool_pair_summaries,
    plan_tool_pair_summaries,
)
from context_mgmt.recall import describe_call, recall_hint
from context_mgmt.threshold import DEFAULT_COMPACTION_THRESHOLD
from conversation import Message, MessageMetadata, TextContent, ToolRequest, ToolResponse
from providers import Provider, Usage

if TYPE_CHECKING:
    from context_mgmt.tokens import TokenCounter

__all__ = [
    "MAX_TOOL_CALL_CUTOFF",
    "MIN_TOOL_CALL_CUTOFF",
    "TOOLCALL_SUMMARIZATION_BATCH_SIZE",
    "TOOL_SUMMARY_KIND",
    "PairApplication",
    "PairStatus",
    "ToolPairError",
    "ToolPairSummary",
    "apply_tool_pair_summaries",
    "compute_tool_call_cutoff",
    "count_tool_requests",
    "plan_tool_pair_summaries",
    "summarize_tool_pair",
    "summarize_tool_pair_with_usage",
    "tool_ids_to_summarize",
]

TOOLCALL_SUMMARIZATION_BATCH_SIZE = 10
MIN_TOOL_CALL_CUTOFF = 10
MAX_TOOL_CALL_CUTOFF = 500

TOOL_PAIR_TEMPLATE = "tool_pair_summary.md"
TOOL_PAIR_REQUEST = "Write the note for the tool call given in the system prompt."
MAX_SUMMARIZED_OUTPUT_CHARS = 40_000
"""Tool output beyond this is cut from the middle before summarizing, so one huge result
cannot overflow the fast model's window."""


# -- when and what ----------------------------------------------------------------------------


def compute_tool_call_cutoff(context_limit: int, threshold: float) -> int:
    """Tool calls kept verbatim before older ones are summarized.

    `threshold` (the auto-compact share) counts when `0 < threshold <= 1`, else 0.8 is used;
    the effective window is `floor(context_limit * threshold)`, and the cutoff is
    `3 * effective // 20_000` clamped to 10..500 (128k at 0.8 gives 15; 1M gives 120).
    """
    share = threshold if 0 < threshold <= 1 else DEFAULT_COMPACTION_THRESHOLD
    effective = math.floor(context_limit * share)
    return min(max((3 * effective) // 20_000, MIN_TOOL_CALL_CUTOFF), MAX_TOOL_CALL_CUTOFF)


def count_tool_requests(messages: Sequence[Message]) -> int:
    """Tool requests in `messages`: pass the current turn's messages to get `protect_last_n`."""
    return sum(len(m.tool_requests) for m in messages)


def tool_ids_to_summarize(
    messages: Sequence[Message],
    cutoff: int,
    protect_last_n: int,
    *,
    exclude: Collection[str] = (),
) -> list[str]:
    """The oldest `TOOLCALL_SUMMARIZATION_BATCH_SIZE` tool call ids of the agent view, or none.

    Ids are the tool requests of agent-visible messages in order; the last `protect_last_n`
    (the current turn's calls) are never eligible. Nothing is chosen until more than
    `cutoff + batch` calls are eligible, so summaries come in whole batches. `exclude` (ids
    already summarized, in flight, or failing) is skipped; the choice then stays among the
    calls older than the `cutoff` most recent eligible ones.
    """
    batch = TOOLCALL_SUMMARIZATION_BATCH_SIZE
    ids = [r.id for m in messages if m.metadata.agent_visible for r in m.tool_requests]
    eligible = max(len(ids) - max(protect_last_n, 0), 0)
    if eligible <= cutoff + batch:
        return []
    if not exclude:
        return ids[:batch]
    return [i for i in ids[: eligible - cutoff] if i not in exclude][:batch]


_Part = TypeVar("_Part", ToolRequest, ToolResponse)


# -- the summary ------------------------------------------------------------------------------


class ToolPairError(ValueError):
    """A tool pair cannot be summarized (no such call, no result, empty summary)."""


@dataclass(frozen=True)
class ToolPairSummary:
    tool_id: str
    message: Message
    """User-role, agent-only, kind `tool_summary`, `source_ids` = the pair's messages."""
    usage: Usage
    """Billable usage of the summary call (estimated where the provider did not report)."""


async def summarize_tool_pair(
    provider: Provider, messages: Sequence[Message], tool_id: str
) -> Message:
    """Summarize the call `tool_id` and its result into one agent-only user message."""
    return (await summarize_tool_pair_with_usage(provider, messages, tool_id)).message


async def summarize_tool_pair_with_usage(
    provider: Provider,
    messages: Sequence[Message],
    tool_id: str,
    *,
    counter: TokenCounter | None = None,
) -> ToolPairSummary:
    """`summarize_tool_pair` plus the usage of its model call, for the usage ledger.

    One `provider.complete(..., fast=True)` call with no tools. Raises `ToolPairError`, before
    any model call, when `messages` hold no agent-visible request or response for `tool_id`,
    and when the reply is empty; provider errors propagate.
    """
    from prompts import render

    request_message, request = _find(messages, tool_id, ToolRequest)
    response_message, response = _find(messages, tool_id, ToolResponse)
    if request is None or request_message is None or response is None or response_message is None:
        raise ToolPairError(f"No agent-visible tool pair found for tool id: {tool_id}")

    transcript = _pair_transcript(request_message, request, response_message, response)
    system = render(TOOL_PAIR_TEMPLATE, tool_name=request.name, call=transcript)
    ask = Message.user(TOOL_PAIR_REQUEST)
    reply, usage = await provider.complete(system, [ask], (), fast=True)
    text = reply.text.strip()
    if not text:
        raise ToolPairError(f"the model returned an empty summary for tool call {tool_id!r}")
    if counter is None and (usage.input_tokens is None or usage.output_tokens is None):
        from context_mgmt.tokens import default_counter

        counter = default_counter()
    if counter is not None:
        from context_mgmt.summarize import normalise_usage

        usage = normalise_usage(usage, system, ask, reply, counter)

    header = (
        f"[Summary of earlier tool call {tool_id}: {describe_call(request, tool_id)}; "
        f"full output: {recall_hint(tool_id)}]"
    )
    sources = tuple(
        dict.fromkeys(
            m.id
            for m in messages
            if any(isinstance(p, ToolRequest | ToolResponse) and p.id == tool_id for p in m.content)
        )
    )
    message = Message(
        role="user",
        content=(TextContent(text=f"{header}\n{text}"),),
        metadata=MessageMetadata.agent_only().with_kind(TOOL_SUMMARY_KIND, sources),
        created=max(request_message.created, response_message.created),
    )
    return ToolPairSummary(tool_id, message, usage)


def _find(
    messages: Sequence[Message], tool_id: str, kind: type[_Part]
) -> tuple[Message | None, _Part | None]:
    """The first agent-visible message holding a part of `kind` with `tool_id`. A hidden
    half means the pair is already out of the agent's view (compacted or summarized), so
    summarizing it would be a wasted model call (reference §7.2)."""
    for message in messages:
        if not message.metadata.agent_visible:
            continue
        for part in message.content:
            if isinstance(part, kind) and part.id == tool_id:
                return message, part
    return None, None


def _pair_transcript(
    request_message: Message,
    request: ToolRequest,
    response_message: Message,
    response: ToolResponse,
) -> str:
    """The call with the agent's note before it, and its (clipped) result; sibling calls of
    a parallel batch are left out."""
    intent = [p for p in request_message.content if isinstance(p, TextContent) and p.text.strip()]
    asked = request_message.with_content([*intent, request])
    answered = response_message.with_content([_clipped(response)])
    return "\n".join(format_message_for_compacting(m) for m in (asked, answered))


def _clipped(response: ToolResponse) -> ToolResponse:
    limit = MAX_SUMMARIZED_OUTPUT_CHARS
    if sum(len(p.text) for p in response.content if isinstance(p, TextContent)) <= limit:
        return response
    text = response.text()
    head, tail = text[: limit * 2 // 3], text[-(limit // 3) :]
    left_out = len(text) - len(head) - len(tail)
    clipped = f"{head}\n[... {left_out:,} characters left out ...]\n{tail}"
    others = tuple(p for p in response.content if not isinstance(p, TextContent))
    return response.model_copy(update={"content": (TextContent(text=clipped), *others)})
