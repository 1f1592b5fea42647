"""The reply loop's side of old-tool-output handling: run `ContextTrimmer` before each model
call, persist what it changed, and tell the renderers.

`context_strategy` picks the plan (`context_mgmt.strategy.context_plan`): `summarize`
(goose-like: background summaries of old tool calls, compaction at the threshold), `mask`
(placeholders for old tool outputs; compaction only on overflow) or `hybrid` (masking first,
compaction at the threshold as the backstop). The decisions live in `context_mgmt.trimming`,
which `gosling context replay` runs too, so a replay measures exactly this policy.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from agent.config import Settings
from agent.events import ContextTrimmed, Event
from agent.session import AgentSession
from context_mgmt.masking import MaskingPresenter
from context_mgmt.strategy import context_plan
from context_mgmt.tokens import TokenCounter
from context_mgmt.trimming import ContextTrimmer
from providers import Provider
from sessions.records import UsageKind, UsageRecord


class ContextPolicy:
    def __init__(self, provider: Provider, config: Settings, counter: TokenCounter) -> None:
        self.provider = provider
        self.plan = context_plan(
            config.context_strategy,
            tool_pair_summarization=config.tool_pair_summarization,
            manages_own_context=provider.manages_own_context,
        )
        self.present = MaskingPresenter()
        """How the model sees a stored message (masked results as placeholders)."""
        self.trimmer = ContextTrimmer(
            self.plan,
            provider,
            keep_last=config.mask_keep_last,
            cutoff=config.tool_call_cutoff,
            threshold=config.auto_compact_threshold,
            counter=counter,
        )

    async def before_call(self, session: AgentSession, protect_last_n: int) -> AsyncIterator[Event]:
        changes = self.trimmer.step(session.messages, session.visible_tool_calls, protect_last_n)
        model = self.provider.model_config.model
        usage = [UsageRecord(u, model, UsageKind.SUMMARY) for u in changes.usage]
        if changes.changed or usage:
            session.commit(metadata=changes.flips, append=changes.appended, usage=usage)
        if changes.masked_tool_ids:
            yield ContextTrimmed("mask", list(changes.masked_tool_ids))
        if changes.summarized_tool_ids:
            yield ContextTrimmed("summarize", list(changes.summarized_tool_ids))

    async def settle(self, session: AgentSession, *, cancelled: bool) -> None:
        """End of a turn: a cancelled turn drops its pending summaries; otherwise they keep
        running and apply before a later model call."""
        if cancelled:
            await self.close()

    async def close(self) -> None:
        await self.trimmer.close()
