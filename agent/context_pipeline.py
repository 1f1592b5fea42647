"""`ContextPipeline`: every context decision of one session, in one object.

The reply loop asks it at three named points and decides nothing about the context itself:

- `before_call(session, protect_last_n)`: trim old tool output (masking, tool-pair
  summaries), then compact when the context is over the auto-compact threshold;
- `overflowed(session, error)`: the provider rejected the request as too long: compact and
  let the loop retry, or give up after `MAX_OVERFLOW_COMPACTIONS` in a row;
- `after_call(session, sent, reply, usage)`: store the reply with its usage and take the
  provider's count as the new size of the context.

`compact` is the compaction itself (also `/compact`), `explain` says why it is or is not
compacting (`/context`). `context_strategy` decides what runs (read once, in `_use`, together
with the provider's `manages_own_context`):

| strategy | masking | pair summaries | compaction at threshold | on overflow |
|---|---|---|---|---|
| `summarize` (goose-like) | – | yes | yes | yes |
| `mask` | yes | – | – | yes |
| `hybrid` (default) | yes | – | yes | yes |

A provider that manages its own context is never summarized or compacted; masking still
applies, since it only changes what is sent. The pipeline lives on its session
(`AgentSession.pipeline`), so nothing it remembers (the masking batch step, a summary batch
still running, the size of the context) can reach another session.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gosling.agent.events import (
    CompactionFinished,
    CompactionRefused,
    CompactionStarted,
    CompactionTrigger,
    ContextTrimmed,
    Event,
    MessageAdded,
    Notice,
)
from gosling.agent.trimmer import Trimmed, Trimmer, TrimOutlook, with_flips
from gosling.context_mgmt.compact import compact_messages
from gosling.context_mgmt.context_size import (
    ContextSize,
    TokenSource,
    auto_compact_enabled,
    needs_compaction,
    usage_percent,
)
from gosling.context_mgmt.errors import CompactionFailed
from gosling.context_mgmt.masking import MaskingPresenter
from gosling.context_mgmt.pair_summarizer import ToolPairSummarizer
from gosling.context_mgmt.prefix_form import CompactionForm, SessionPrefix
from gosling.context_mgmt.receipt import MAX_STORED_RECEIPTS, RECEIPTS_KEY, CompactionReceipt
from gosling.context_mgmt.summary_deadline import SummaryDeadline
from gosling.context_mgmt.tokens import TokenCounter
from gosling.context_mgmt.tool_pairs import ends_with_misplaced_note
from gosling.conversation import Message
from gosling.providers import ContextLengthExceeded, Provider, ToolSpec, Usage
from gosling.sessions.records import UsageKind, UsageRecord

if TYPE_CHECKING:
    from gosling.agent.after_compaction import Restored
    from gosling.agent.config import Settings
    from gosling.agent.session import AgentSession

MAX_OVERFLOW_COMPACTIONS = 2
"""Overflow-driven compactions in a row (without a successful call between them) before the
turn gives up instead of summarizing a summary again."""

OVERFLOW_NOTICE = "The request did not fit the model's context window; compacting."
OVERFLOW_LOOP_MESSAGE = (
    "The model's context window was exceeded again after {count} compactions in a row: what "
    "remains (system prompt, tool definitions, the summary and the latest messages) does not "
    "fit. Use a model with a larger context window, enable fewer extensions, or start a new "
    "session."
)
STILL_OVER_NOTICE = (
    "Context is still at ~{tokens} tokens ({percent}% of {limit}) after compaction, over the "
    "auto-compact threshold of {threshold}%; not compacting again until it drops below. If "
    "the next request does not fit, gosling will compact once more before giving up."
)


@dataclass(frozen=True)
class ContextCheck:
    """The answer to "compact before the next call?", with the figure it was based on."""

    compact: bool
    tokens: int
    source: TokenSource
    reason: str
    automatic: bool
    """Compaction runs by itself at the threshold (for this strategy, provider and setting)."""


class ContextPipeline:
    """One session's context decisions (see the module docstring)."""

    def __init__(self, provider: Provider, settings: Settings, counter: TokenCounter) -> None:
        self.settings = settings
        self.counter = counter
        self.present = MaskingPresenter()
        """How the model sees a stored message (masked ones as placeholders); the session's
        view shows every message through it."""
        self.size = ContextSize(counter)
        self.overflow_compactions = 0
        """Overflow-driven compactions since the last successful model call."""
        self._standing_down = False
        self._scheduled_at: tuple[int, int] = (-1, -1)
        self.pairs: ToolPairSummarizer | None = None
        self._use(provider)

    def _use(self, provider: Provider) -> None:
        from gosling.agent.provider_choice import model_prompt_cache

        self.provider = provider
        cache = model_prompt_cache(self.settings, provider.model_config.model, provider.name)
        self.trimmer = Trimmer(cache, self.settings, self.counter, self.present)
        """When trimming old tool output pays under this provider's prompt cache."""
        strategy = self.settings.context_strategy
        self.provider_manages_context = provider.manages_own_context
        gosling_compacts = not self.provider_manages_context
        self.masks_tool_results = strategy in ("mask", "hybrid")
        self.compacts_at_threshold = strategy in ("summarize", "hybrid") and gosling_compacts
        self.compacts_on_overflow = gosling_compacts
        summarizes = (
            strategy == "summarize" and self.settings.tool_pair_summarization and gosling_compacts
        )
        self.pairs = (
            ToolPairSummarizer(
                provider,
                cutoff=self.settings.tool_call_cutoff,
                threshold=self.settings.auto_compact_threshold,
                counter=self.counter,
            )
            if summarizes
            else None
        )

    # -- the session's life ---------------------------------------------------------------------

    def resumed(self, session: AgentSession, stored_tokens: int) -> None:
        """A stored session is continued: its last recorded context size is the best figure
        until the next call (a local estimate only when it recorded none)."""
        if stored_tokens > 0:
            session.view.sync(session.messages)
            self.size.set(stored_tokens, "stored", session.view.messages())

    def set_overhead(self, system_prompt: str, tool_specs: Sequence[ToolSpec]) -> None:
        """The system prompt and tool schemas every request carries, for local estimates."""
        system = self.counter.count_text(system_prompt) + 4
        self.size.overhead_tokens = system + self.counter.count_tools(tool_specs) + 3

    async def switch_provider(self, provider: Provider) -> None:
        """`/model`: a summary batch for the old model is dropped; the rest carries over."""
        await self.close()
        self._use(provider)

    def cleared(self) -> None:
        """`/clear`: the model starts afresh, so the figures do too."""
        self.size.forget()
        self._standing_down = False
        self.overflow_compactions = 0
        self.trimmer.restart()

    async def settle(self, *, cancelled: bool) -> None:
        """End of a turn: a cancelled turn drops its pending summaries; otherwise they keep
        running and apply before a later model call."""
        if cancelled:
            await self.close()

    async def close(self) -> None:
        """Cancel background summaries; their results are dropped."""
        if self.pairs is not None:
            await self.pairs.cancel()

    # -- before a model call ------------------------------------------------------------------

    async def before_call(self, session: AgentSession, protect_last_n: int) -> AsyncIterator[Event]:
        """Trim old tool output, then compact if the context is over the threshold.
        `protect_last_n`: the current turn's tool calls, which are never summarized."""
        for event in self._trim(session, protect_last_n):
            yield event
        check = self.check(session.view.request_messages(session.messages))
        if check.compact:
            yield Notice(f"Compacting the conversation: {check.reason}.")
            async for event in self.compact(session, trigger="threshold"):
                yield event

    def _trim(self, session: AgentSession, protect_last_n: int) -> list[Event]:
        messages = session.messages
        visible_calls = session.visible_tool_calls
        trimmed = self.trimmer.mask_and_fold(session) if self.masks_tool_results else Trimmed({})
        flips = trimmed.flips
        appended = trimmed.appended
        summarized: list[str] = []
        usage: list[UsageRecord] = []
        if self.pairs is not None:
            current: Sequence[Message] = messages
            if self.pairs.ready or ends_with_misplaced_note(current):
                if flips:
                    current = with_flips(current, flips)
                applied = self.pairs.apply_ready(current)
                if applied.changed:
                    hidden = set(applied.flipped_ids)
                    flips.update({m.id: m.metadata for m in applied.messages if m.id in hidden})
                    appended = applied.appended
                    summarized = applied.ids("applied")
                    current = applied.messages
                    visible_calls = sum(
                        len(m.tool_requests) for m in current if m.metadata.agent_visible
                    )
            model = self.provider.model_config.model
            usage = [UsageRecord(u, model, UsageKind.SUMMARY) for u in self.pairs.take_usage()]
            # Selection scans the history: redo it only when the calls or the protected tail
            # changed (a new turn starts with nothing protected).
            key = (visible_calls, protect_last_n)
            if key != self._scheduled_at:
                self._scheduled_at = key
                # Without a cache, goose's rule: batches of 10 as soon as they are due. With
                # one, every old call at the moment the clock says hiding them pays.
                if self.trimmer.cache.mechanism == "none":
                    self.pairs.maybe_schedule(current, protect_last_n)
                else:
                    ids = self.pairs.due_ids(current, protect_last_n, batch=0)
                    if not ids:
                        self.trimmer.count_call()
                    elif self.trimmer.summaries_pay(session, ids):
                        self.pairs.schedule(current, ids)
        sizes: tuple[int | None, int | None] = (None, None)
        if flips or appended:
            before = self.size.measure(session.view.request_messages(messages))[0]
        if flips or appended or usage:
            session.commit(metadata=flips, append=appended, usage=usage)
        if flips or appended:
            sizes = (before, self.size.measure(session.view.request_messages(messages))[0])
        events: list[Event] = []
        if trimmed.masked:
            events.append(ContextTrimmed("mask", list(trimmed.masked), *sizes))
        if trimmed.folded:
            events.append(ContextTrimmed("fold", list(trimmed.folded), *sizes))
        if summarized:
            events.append(ContextTrimmed("summarize", summarized, *sizes))
        return events

    def check(self, view: Sequence[Message]) -> ContextCheck:
        """Should the context be compacted before the next call, and why (or why not)?"""
        tokens, source = self.size.measure(view)
        threshold = self.settings.auto_compact_threshold
        limit = self.provider.model_config.context_limit
        if self.provider.manages_own_context:
            return ContextCheck(
                False, tokens, source, "the provider manages its own context", False
            )
        if not self.compacts_at_threshold:
            reason = f"context_strategy {self.settings.context_strategy!r} compacts only when a "
            return ContextCheck(False, tokens, source, reason + "request overflows", False)
        if not auto_compact_enabled(threshold) or limit <= 0:
            return ContextCheck(False, tokens, source, "auto_compact_threshold is off", False)
        percent = usage_percent(tokens, limit)
        if not needs_compaction(tokens, limit, threshold):
            self._standing_down = False
            return ContextCheck(False, tokens, source, f"context at {percent}% of the window", True)
        if self._standing_down:
            reason = (
                "still over the threshold right after a compaction; leaving it to the overflow path"
            )
            return ContextCheck(False, tokens, source, reason, True)
        reason = (
            f"context at {percent}%, over the auto-compact threshold of {int(threshold * 100)}%"
        )
        return ContextCheck(True, tokens, source, reason, True)

    def trim_outlook(self, session: AgentSession) -> TrimOutlook | None:
        """What trimming old tool output would do now and when it pays (for `/context`);
        None when this strategy does not mask. Changes nothing."""
        return self.trimmer.outlook(session) if self.masks_tool_results else None

    def explain(self, view: Sequence[Message]) -> ContextCheck:
        """`check` for `/context`, without changing what the next check decides."""
        standing_down = self._standing_down
        try:
            return self.check(view)
        finally:
            self._standing_down = standing_down

    # -- the call and after it ------------------------------------------------------------------

    async def overflowed(
        self, session: AgentSession, error: ContextLengthExceeded
    ) -> AsyncIterator[Event]:
        """The provider rejected the request as too long: compact so the loop can retry it.
        Re-raises `error` when gosling does not compact for this provider, and raises
        `CompactionFailed` (reason "overflow_loop") once the streak limit is reached."""
        if not self.compacts_on_overflow:
            raise error
        if self.overflow_compactions >= MAX_OVERFLOW_COMPACTIONS:
            message = OVERFLOW_LOOP_MESSAGE.format(count=self.overflow_compactions)
            raise CompactionFailed(message, reason="overflow_loop") from error
        self.overflow_compactions += 1
        yield Notice(OVERFLOW_NOTICE)
        async for event in self.compact(session, trigger="overflow"):
            yield event

    def after_call(
        self, session: AgentSession, sent: Sequence[Message], reply: Message, usage: Usage
    ) -> int:
        """A call succeeded: store `reply` with its usage (one commit) and take the provider's
        count (input plus output) as the size of `sent` and `reply`. Ends any overflow streak.
        Returns the context size to report."""
        self.overflow_compactions = 0
        reported = None
        if usage.input_tokens is not None:
            reported = usage.input_tokens + (usage.output_tokens or 0)
        record = UsageRecord(usage, self.provider.model_config.model, UsageKind.NORMAL)
        session.commit(append=[reply], usage=[record], context_tokens=reported)
        covered = [*sent, reply]
        if reported is None:
            return self.size.measure(covered)[0]
        self.size.set(reported, "reported", covered)
        return reported

    # -- compaction -----------------------------------------------------------------------------

    def _compaction_form(
        self, session: AgentSession
    ) -> tuple[CompactionForm, SessionPrefix | None]:
        """`compaction_form`: prefix when set so (auto: when the provider caches prompts) and
        the session has sent a request; the view as the last request sent it."""
        setting = self.settings.compaction_form
        cached = self.trimmer.cache.mechanism != "none"
        if setting == "transcript" or (setting == "auto" and not cached):
            return "transcript", None
        if session.prefix is None:
            return "transcript", None
        view = self.trimmer.anchored(session.view.request_messages(session.messages))
        prefix = session.prefix
        return "prefix", SessionPrefix(prefix.system_prompt, prefix.tool_specs, view)

    async def compact(
        self,
        session: AgentSession,
        *,
        trigger: CompactionTrigger = "manual",
        focus: str | None = None,
    ) -> AsyncIterator[Event]:
        """Compact the session now (threshold, overflow or `/compact`). The retained estimate
        becomes the size of the context; if it is still over the threshold, the threshold
        check stands down until it is back under (one notice says so)."""
        instructions: str | None = None
        if session.hooks is not None:
            from gosling.agent.hooks.steps import PreCompactGate

            gate = PreCompactGate()
            async for event in gate.run(session, trigger, focus):
                yield event
            if gate.waits:
                return
            instructions = gate.instructions
        before = self.size.measure(session.view.request_messages(session.messages))[0]
        yield CompactionStarted(trigger, before)
        model = self.provider.model_config.model
        deadline = SummaryDeadline(
            self.settings.compaction_timeout_floor, self.settings.compaction_timeout_cap
        )
        form, prefix = self._compaction_form(session)
        try:
            result = await compact_messages(
                self.provider,
                session.messages,
                manual=trigger == "manual",
                focus=focus,
                counter=self.counter,
                instructions=instructions,
                deadline=deadline,
                refuse_larger=True,
                form=form,
                prefix=prefix,
            )
        except CompactionFailed as failure:
            # What the attempts cost is billed either way: record it before anything else.
            if failure.usage.total_tokens:
                session.commit(usage=[UsageRecord(failure.usage, model, UsageKind.COMPACTION)])
            if failure.reason != "summary_too_large" or trigger == "overflow":
                raise
            # The history stays; the threshold check stands down so the next call does not
            # pay for the same refused summary again.
            self._standing_down = trigger == "threshold"
            yield CompactionRefused(str(failure), trigger, before)
            return
        hidden = set(result.hidden_ids)
        flips = {m.id: m.metadata for m in result.messages if m.id in hidden}
        retained = result.retained_tokens + self.size.overhead_tokens
        usage = UsageRecord(result.usage, model, UsageKind.COMPACTION)
        session.commit(
            append=result.appended, metadata=flips, usage=[usage], context_tokens=retained
        )
        restored = self._restore(session)
        if restored.message is not None:
            retained += restored.tokens
            session.commit(append=[restored.message], context_tokens=retained)
        self.size.set(retained, "retained", session.messages)
        self.trimmer.restart()
        limit = self.provider.model_config.context_limit
        threshold = self.settings.auto_compact_threshold
        self._standing_down = needs_compaction(retained, limit, threshold)
        for message in result.appended:
            yield MessageAdded(message)
        if restored.message is not None:
            yield MessageAdded(restored.message)
        receipt = result.receipt
        _store_receipt(session, trigger, before, retained, receipt, restored)
        yield CompactionFinished(
            trigger,
            before,
            retained,
            result.summary.structured is not None,
            receipt=receipt.to_json(),
            receipt_line=receipt.line(),
            form=result.summary.form,
            summary_usage=_usage_figures(result.usage),
            restored=restored.to_json(),
        )
        if session.hooks is not None:
            from gosling.agent.hooks.steps import compaction_context

            summary = result.summary.message.text
            async for event in compaction_context(session, trigger, summary, model):
                yield event
        if self._standing_down:
            yield Notice(
                STILL_OVER_NOTICE.format(
                    tokens=retained,
                    percent=usage_percent(retained, limit),
                    limit=limit,
                    threshold=int(threshold * 100),
                )
            )

    def _restore(self, session: AgentSession) -> Restored:
        """The hints and files that come back after a compaction (`agent.after_compaction`)."""
        from gosling.agent.after_compaction import restore_after_compaction
        from gosling.agent.sandbox.choice import credential_locations

        hidden = credential_locations(Path.home(), [Path(p) for p in self.settings.sandbox_hide])
        return restore_after_compaction(
            session.messages,
            session.working_dir,
            session.hints,
            self.counter,
            max_files=self.settings.compaction_reread_files,
            max_tokens=self.settings.compaction_reread_tokens,
            context_limit=self.provider.model_config.context_limit,
            hidden=hidden,
        )


def _usage_figures(usage: Usage) -> dict[str, Any]:
    sent = usage.input_tokens or 0
    return {
        "input_tokens": sent,
        "output_tokens": usage.output_tokens or 0,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "cache_share": round(usage.cache_read_tokens / sent, 4) if sent else 0.0,
    }


def _store_receipt(
    session: AgentSession,
    trigger: str,
    before: int,
    after: int,
    receipt: CompactionReceipt,
    restored: Restored,
) -> None:
    """Keep the receipt with the session (`gosling sessions show`, `/context`)."""
    stored = session.extension_data.get(RECEIPTS_KEY)
    receipts = list(stored) if isinstance(stored, list) else []
    entry: dict[str, Any] = {"trigger": trigger, "tokens_before": before, "tokens_after": after}
    if restored.message is not None:
        entry["restored"] = restored.to_json()
    receipts.append({**entry, **receipt.to_json()})
    session.set_extension_data(RECEIPTS_KEY, receipts[-MAX_STORED_RECEIPTS:])
