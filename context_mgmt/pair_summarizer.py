"""Tool-pair summaries: the fast-model call that writes one (`summarize_tool_pair`) and
`ToolPairSummarizer`, which makes them in the background while the model works.

A session's `ContextPipeline` keeps one (strategy `summarize`) and, right before each model
call, applies the ready summaries (`apply_ready`), records their usage (`take_usage`) and
starts the next batch when one is due (`maybe_schedule`); `cancel()` when the turn is
cancelled or the session closes.

One batch runs at a time, as one asyncio task that summarizes its ids one after another (the
fast model, no tools), from a snapshot of the conversation taken when it started. A batch's
summaries become ready together when it finishes, so the agent view changes once per batch,
which costs one prompt-cache break instead of ten. No pair is summarized twice: ids in flight,
ready, applied or given up on are excluded from selection. A failed summary is logged and
skipped; the pair stays as it is and may be tried once more in a later batch
(`max_attempts`). Cancelling discards the running batch: nothing it made is applied (the usage
of calls that did complete is still reported, since it was billed).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from gosling.context_mgmt.context_size import DEFAULT_COMPACTION_THRESHOLD
from gosling.context_mgmt.format import format_message_for_compacting
from gosling.context_mgmt.recall import describe_call, recall_hint
from gosling.context_mgmt.tool_pairs import (
    TOOL_SUMMARY_KIND,
    TOOLCALL_SUMMARIZATION_BATCH_SIZE,
    PairApplication,
    apply_tool_pair_summaries,
    compute_tool_call_cutoff,
    tool_ids_to_summarize,
)
from gosling.conversation import Message, MessageMetadata, TextContent, ToolRequest, ToolResponse
from gosling.providers import Provider, Usage

if TYPE_CHECKING:
    from gosling.context_mgmt.tokens import TokenCounter

TOOL_PAIR_TEMPLATE = "tool_pair_summary.md"
TOOL_PAIR_REQUEST = "Write the note for the tool call given in the system prompt."
MAX_SUMMARIZED_OUTPUT_CHARS = 40_000
"""Tool output beyond this is cut from the middle before summarizing, so one huge result
cannot overflow the fast model's window."""

logger = logging.getLogger(__name__)

DEFAULT_MAX_ATTEMPTS = 2


class ToolPairSummarizer:
    """Schedules, collects and applies tool-pair summaries for one session."""

    def __init__(
        self,
        provider: Provider,
        *,
        cutoff: int | None = None,
        threshold: float = DEFAULT_COMPACTION_THRESHOLD,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        counter: TokenCounter | None = None,
    ) -> None:
        """`cutoff` overrides the one derived from the provider's window and `threshold`
        (config `tool_call_cutoff`). Whether summaries run at all (the strategy, config
        `tool_pair_summarization`, a provider that manages its own context) is the session's
        `ContextPipeline`'s decision."""
        if cutoff is not None and cutoff < 0:
            raise ValueError(f"tool_call_cutoff must be 0 or more, got {cutoff}")
        self.provider = provider
        self.cutoff = (
            cutoff
            if cutoff is not None
            else compute_tool_call_cutoff(provider.model_config.context_limit, threshold)
        )
        self.max_attempts = max_attempts
        self._counter = counter
        self._task: asyncio.Task[None] | None = None
        self._in_flight: tuple[str, ...] = ()
        self._ready: dict[str, Message] = {}
        self._done: set[str] = set()
        self._failures: dict[str, int] = {}
        self._usage: list[Usage] = []

    # -- state ----------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """A batch is being summarized."""
        return self._task is not None and not self._task.done()

    @property
    def in_flight(self) -> tuple[str, ...]:
        return self._in_flight if self.running else ()

    @property
    def ready(self) -> tuple[str, ...]:
        """Tool ids summarized and not applied yet."""
        return tuple(self._ready)

    def _excluded(self) -> set[str]:
        given_up = {i for i, n in self._failures.items() if n >= self.max_attempts}
        return {*self.in_flight, *self._ready, *self._done, *given_up}

    # -- scheduling -----------------------------------------------------------------------------

    def maybe_schedule(self, messages: Sequence[Message], protect_last_n: int) -> list[str]:
        """Start a batch if one is due (`tool_ids_to_summarize`); returns the ids started.

        `protect_last_n`: the tool calls of the current turn, which are never summarized.
        """
        return self.schedule(messages, self.due_ids(messages, protect_last_n))

    def due_ids(
        self,
        messages: Sequence[Message],
        protect_last_n: int,
        batch: int = TOOLCALL_SUMMARIZATION_BATCH_SIZE,
    ) -> list[str]:
        """The batch `maybe_schedule` would start now (none while one runs); `batch` as in
        `tool_ids_to_summarize`."""
        if self.running:
            return []
        excluded = self._excluded()
        return tool_ids_to_summarize(
            messages, self.cutoff, protect_last_n, exclude=excluded, batch=batch
        )

    def schedule(self, messages: Sequence[Message], ids: Sequence[str]) -> list[str]:
        """Summarize `ids` in a background task, from a snapshot of `messages`.

        Ids already in flight, ready, applied or given up on are skipped. Does nothing while
        a batch runs (the ids come up again next time). Must be called from a running loop.
        """
        if self.running:
            return []
        excluded = self._excluded()
        wanted = [i for i in dict.fromkeys(ids) if i not in excluded]
        if not wanted:
            return []
        self._in_flight = tuple(wanted)
        self._task = asyncio.get_running_loop().create_task(
            self._run(tuple(messages), self._in_flight), name="gosling-tool-pair-summaries"
        )
        return wanted

    async def _run(self, snapshot: tuple[Message, ...], ids: tuple[str, ...]) -> None:
        batch: dict[str, Message] = {}
        for tool_id in ids:
            try:
                summary = await summarize_tool_pair(
                    self.provider, snapshot, tool_id, counter=self._counter
                )
            except ToolPairError as exc:
                logger.warning("Failed to summarize tool pair %s: %s", tool_id, exc)
                self._done.add(tool_id)
                continue
            except Exception as exc:
                logger.warning("Failed to summarize tool pair %s: %s", tool_id, exc)
                self._failures[tool_id] = self._failures.get(tool_id, 0) + 1
                continue
            self._usage.append(summary.usage)
            batch[tool_id] = summary.message
        self._ready.update(batch)

    async def collect(self) -> None:
        """Wait until the running batch (if any) has finished."""
        task = self._task
        if task is not None and not task.done():
            await asyncio.wait({task})

    async def cancel(self) -> None:
        """Cancel the running batch and wait until it has stopped; its results are dropped.

        Safe to call at any time and more than once.
        """
        task, self._task = self._task, None
        self._in_flight = ()
        if task is None:
            return
        if not task.done():
            task.cancel()
            await asyncio.wait({task})
        if not task.cancelled() and task.exception() is not None:
            logger.warning("tool-pair summaries failed: %s", task.exception())

    # -- results --------------------------------------------------------------------------------

    def apply_ready(self, messages: Sequence[Message]) -> PairApplication:
        """Apply the finished summaries that fit now (`apply_tool_pair_summaries`).

        Summaries that have to wait (sibling calls not summarized yet, or the conversation
        does not end with tool results) are kept for a later call; the rest are done with.
        """
        application = apply_tool_pair_summaries(messages, self._ready)
        for tool_id, status in application.status.items():
            if status != "waiting":
                self._ready.pop(tool_id, None)
                self._done.add(tool_id)
        return application

    def take_usage(self) -> list[Usage]:
        """Usage of the summary calls made since the last call, oldest first."""
        usage, self._usage = self._usage, []
        return usage


# -- one summary -------------------------------------------------------------------------------

_Part = TypeVar("_Part", ToolRequest, ToolResponse)


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
    provider: Provider,
    messages: Sequence[Message],
    tool_id: str,
    *,
    counter: TokenCounter | None = None,
) -> ToolPairSummary:
    """Summarize the call `tool_id` and its result into one agent-only user message, with
    the usage of the model call for the usage ledger.

    One `provider.complete(..., fast=True)` call with no tools. Raises `ToolPairError`, before
    any model call, when `messages` hold no agent-visible request or response for `tool_id`,
    and when the reply is empty; provider errors propagate.
    """
    from gosling.prompts import render

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
        from gosling.context_mgmt.tokens import default_counter

        counter = default_counter()
    if counter is not None:
        from gosling.context_mgmt.summarize import normalise_usage

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
