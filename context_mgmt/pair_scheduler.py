"""`ToolPairSummarizer`: tool-pair summaries made in the background while the model works.

The reply loop keeps one per session and, in each iteration:

    application = summarizer.apply_ready(messages)        # right before the model call
    if application.changed:                               # persist: flip flipped_ids,
        ...                                               # append application.appended
    summarizer.maybe_schedule(messages, protect_last_n)   # start the next batch, if due
    ... stream the model's reply, run tools ...
    for usage in summarizer.take_usage(): ...             # usage ledger, kind "summary"

and `await summarizer.cancel()` when the turn is cancelled or the session ends.

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
from typing import TYPE_CHECKING

from context_mgmt.pair_apply import PairApplication, plan_tool_pair_summaries
from context_mgmt.threshold import DEFAULT_COMPACTION_THRESHOLD
from context_mgmt.tool_pairs import (
    ToolPairError,
    compute_tool_call_cutoff,
    summarize_tool_pair_with_usage,
    tool_ids_to_summarize,
)
from conversation import Message
from providers import Provider, Usage

if TYPE_CHECKING:
    from context_mgmt.tokens import TokenCounter

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
        enabled: bool = True,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        counter: TokenCounter | None = None,
    ) -> None:
        """`cutoff` overrides the one derived from the provider's window and `threshold`
        (config `tool_call_cutoff`); `enabled` is config `tool_pair_summarization`. A provider
        that manages its own context is never summarized."""
        if cutoff is not None and cutoff < 0:
            raise ValueError(f"tool_call_cutoff must be 0 or more, got {cutoff}")
        self.provider = provider
        self.cutoff = (
            cutoff
            if cutoff is not None
            else compute_tool_call_cutoff(provider.model_config.context_limit, threshold)
        )
        self.enabled = enabled and not provider.manages_own_context
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

        `protect_last_n`: the tool calls of the current turn (`count_tool_requests` over the
        turn's messages), which are never summarized.
        """
        if not self.enabled or self.running:
            return []
        ids = tool_ids_to_summarize(messages, self.cutoff, protect_last_n, exclude=self._excluded())
        return self.schedule(messages, ids)

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
                summary = await summarize_tool_pair_with_usage(
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
        """Apply the finished summaries that fit now (`plan_tool_pair_summaries`).

        Summaries that have to wait (sibling calls not summarized yet, or the conversation
        does not end with tool results) are kept for a later call; the rest are done with.
        """
        application = plan_tool_pair_summaries(messages, self._ready)
        for tool_id, status in application.status.items():
            if status != "waiting":
                self._ready.pop(tool_id, None)
                self._done.add(tool_id)
        return application

    def take_usage(self) -> list[Usage]:
        """Usage of the summary calls made since the last call, oldest first."""
        usage, self._usage = self._usage, []
        return usage
