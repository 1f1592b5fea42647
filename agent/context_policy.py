"""What the reply loop does with old tool output before each model call.

`context_strategy` picks the plan (`context_mgmt.strategy.context_plan`):
- `summarize` (goose-like): old tool calls are summarized by the fast model in the
  background, and compaction runs at the threshold;
- `mask`: old tool results are shown to the model as placeholders (no model call);
  compaction only when a request overflows;
- `hybrid`: masking first, compaction at the threshold as the backstop.

Masking never changes a message's content: it flips the `masked` flag, and the view shows a
placeholder in its place (`present`). Summaries hide the pair and add an agent-only note.
Both decisions scan the whole history, so they run only when their outcome can change: the
masked set moves once per batch of tool calls, and summaries apply only when some are ready.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from agent.config import Settings
from agent.events import ContextTrimmed, Event
from agent.session import AgentSession
from context_mgmt.masking import MASK_BATCH_SIZE, MaskingPresenter, tool_results_to_mask
from context_mgmt.pair_scheduler import ToolPairSummarizer
from context_mgmt.strategy import context_plan
from context_mgmt.tokens import TokenCounter
from providers import Provider
from sessions.records import UsageKind


class ContextPolicy:
    def __init__(self, provider: Provider, config: Settings, counter: TokenCounter) -> None:
        self.provider = provider
        self.config = config
        self.plan = context_plan(
            config.context_strategy,
            tool_pair_summarization=config.tool_pair_summarization,
            manages_own_context=provider.manages_own_context,
        )
        self.present = MaskingPresenter()
        self._mask_step = -1
        self._scheduled_at = -1
        self._summarizer = (
            ToolPairSummarizer(
                provider,
                cutoff=config.tool_call_cutoff,
                threshold=config.auto_compact_threshold,
                counter=counter,
            )
            if self.plan.summarize_tool_pairs
            else None
        )

    async def before_call(self, session: AgentSession, protect_last_n: int) -> AsyncIterator[Event]:
        calls = session.visible_tool_calls
        if self.plan.mask_tool_results:
            keep = self.config.mask_keep_last
            step = max(calls - keep, 0) // MASK_BATCH_SIZE
            if step != self._mask_step:
                self._mask_step = step
                ids = tool_results_to_mask(session.messages, keep_last=keep)
                if ids:
                    flips = {}
                    tool_ids: list[str] = []
                    for message_id in ids:
                        message = session.get(message_id)
                        if message is not None:
                            flips[message_id] = message.metadata.with_masked()
                            tool_ids += [r.id for r in message.tool_responses]
                    session.flip(flips)
                    yield ContextTrimmed("mask", tool_ids)
        if self._summarizer is not None:
            async for event in self._apply_summaries(session):
                yield event
            if calls != self._scheduled_at:
                self._scheduled_at = calls
                self._summarizer.maybe_schedule(session.messages, protect_last_n)

    async def _apply_summaries(self, session: AgentSession) -> AsyncIterator[Event]:
        summarizer = self._summarizer
        assert summarizer is not None
        if summarizer.ready:
            applied = summarizer.apply_ready(session.messages)
            if applied.changed:
                flipped = set(applied.flipped_ids)
                flips = {m.id: m.metadata for m in applied.messages if m.id in flipped}
                session.flip(flips, applied.appended)
                yield ContextTrimmed("summarize", applied.ids("applied"))
        for usage in summarizer.take_usage():
            session.record_usage(usage, self.provider.model_config.model, UsageKind.SUMMARY, None)

    async def settle(self, session: AgentSession, *, cancelled: bool) -> None:
        """End of a turn: a cancelled turn drops its pending summaries; otherwise they keep
        running and apply before a later model call."""
        if cancelled:
            await self.close()

    async def close(self) -> None:
        if self._summarizer is not None:
            await self._summarizer.cancel()
