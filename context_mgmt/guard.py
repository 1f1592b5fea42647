"""`ContextBudget`: how full the context is, when to compact, and when to stop trying.

The reply loop keeps one per session and asks it before every model call. It answers from
the best figure it has:

- the provider's own count from the last call (its input plus its output, which the next
  request carries too), plus a local estimate of agent-visible messages added since;
- right after a compaction, the estimate of what was retained, never the summary's raw
  output size and never the stale pre-compaction figure, so it cannot compact every turn
  (reference §13 items 2 and 3);
- before any of that, a local estimate over the agent-visible messages.

Two guards keep compaction from looping (they go beyond goose):

- if the retained context is still over the threshold, the threshold check stands down
  until the context is back under it or another compaction runs; the caller gets one notice
  saying so, and the provider's overflow path decides what happens next;
- at most `MAX_OVERFLOW_COMPACTIONS` overflow-driven compactions in a row (without a
  successful model call between them); the next overflow raises `CompactionFailed` with a
  clear message instead of summarizing a summary again.

A provider that manages its own context (`CompactingProvider`, hosted agents) is never
compacted by gosling.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from context_mgmt.errors import CompactionFailed
from context_mgmt.threshold import (
    DEFAULT_COMPACTION_THRESHOLD,
    needs_compaction,
    usage_percent,
)
from conversation import Message
from providers import Provider, Usage

if TYPE_CHECKING:
    from context_mgmt.compact import CompactionResult
    from context_mgmt.tokens import TokenCounter

MAX_OVERFLOW_COMPACTIONS = 2

TokenSource = Literal["reported", "retained", "estimate"]

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
    """The answer to "should I compact before this call?"."""

    compact: bool
    tokens: int
    source: TokenSource
    reason: str


class ContextBudget:
    """Tracks the context size of one session and decides when compaction runs."""

    def __init__(
        self,
        context_limit: int,
        threshold: float = DEFAULT_COMPACTION_THRESHOLD,
        *,
        manages_own_context: bool = False,
        overhead_tokens: int = 0,
        counter: TokenCounter | None = None,
    ) -> None:
        self.context_limit = context_limit
        self.threshold = threshold
        self.manages_own_context = manages_own_context
        self.overhead_tokens = overhead_tokens
        """Tokens outside the messages (system prompt, tool schemas), added to local
        estimates; provider reports already include them."""
        self._counter = counter
        self._baseline: int | None = None
        self._source: TokenSource = "estimate"
        self._covered: tuple[Message, ...] = ()
        """The messages the baseline accounts for, in order."""
        self._covered_ids: set[str] | None = None
        self._standing_down = False
        self.overflow_compactions = 0
        """Overflow-driven compactions since the last successful model call."""

    @classmethod
    def for_provider(
        cls,
        provider: Provider,
        threshold: float = DEFAULT_COMPACTION_THRESHOLD,
        *,
        overhead_tokens: int = 0,
    ) -> ContextBudget:
        return cls(
            provider.model_config.context_limit,
            threshold,
            manages_own_context=provider.manages_own_context,
            overhead_tokens=overhead_tokens,
        )

    # -- measuring -----------------------------------------------------------------------------

    def measure(self, messages: Sequence[Message]) -> tuple[int, TokenSource]:
        """Current context size of `messages` and where the figure comes from."""
        counter = self._token_counter()
        if self._baseline is None:
            estimate = counter.count_chat("", messages) + self.overhead_tokens
            return estimate, "estimate"
        return self._baseline + counter.count_messages(self._added_since(messages)), self._source

    def _added_since(self, messages: Sequence[Message]) -> Sequence[Message]:
        """Messages not covered by the baseline. Usually the view has only grown since the
        last call, so only its tail is new; anything else falls back to comparing ids."""
        covered, n = self._covered, len(self._covered)
        grown = n and len(messages) >= n and messages[n - 1].id == covered[-1].id
        if grown and messages[0].id == covered[0].id:
            return [m for m in messages[n:] if m.metadata.agent_visible]
        if self._covered_ids is None:
            self._covered_ids = {m.id for m in covered}
        ids = self._covered_ids
        return [m for m in messages if m.metadata.agent_visible and m.id not in ids]

    def record_usage(self, usage: Usage, covered: Iterable[Message]) -> None:
        """After a successful model call: `covered` are the messages that call accounted for
        (the ones sent plus the reply). Resets the overflow streak."""
        self.overflow_compactions = 0
        if usage.input_tokens is None:
            return
        self._baseline = usage.input_tokens + (usage.output_tokens or 0)
        self._source = "reported"
        self._covered, self._covered_ids = tuple(covered), None

    # -- deciding ------------------------------------------------------------------------------

    def check(self, messages: Sequence[Message]) -> ContextCheck:
        """Should the caller compact `messages` before the next model call?"""
        if self.manages_own_context:
            return ContextCheck(False, 0, "estimate", "the provider manages its own context")
        tokens, source = self.measure(messages)
        percent = usage_percent(tokens, self.context_limit)
        if not needs_compaction(tokens, self.context_limit, self.threshold):
            self._standing_down = False
            return ContextCheck(False, tokens, source, f"context at {percent}% of the window")
        if self._standing_down:
            return ContextCheck(
                False,
                tokens,
                source,
                "still over the threshold right after a compaction; leaving it to the "
                "overflow path",
            )
        return ContextCheck(
            True,
            tokens,
            source,
            f"context at {percent}%, over the auto-compact threshold of "
            f"{self._threshold_percent()}%",
        )

    def begin_overflow_compaction(self) -> None:
        """Call when a request overflowed, before compacting to retry it. Raises
        `CompactionFailed` (reason "overflow_loop") once the streak limit is reached."""
        if self.overflow_compactions >= MAX_OVERFLOW_COMPACTIONS:
            raise CompactionFailed(
                OVERFLOW_LOOP_MESSAGE.format(count=self.overflow_compactions),
                reason="overflow_loop",
            )
        self.overflow_compactions += 1

    def compacted(self, result: CompactionResult) -> str | None:
        """After any compaction (threshold, overflow or manual): the retained estimate becomes
        the baseline. Returns a notice, once, when the retained context is still over the
        threshold; the threshold check then stands down."""
        self._baseline = result.retained_tokens + self.overhead_tokens
        self._source = "retained"
        self._covered, self._covered_ids = tuple(result.messages), None
        still_over = needs_compaction(self._baseline, self.context_limit, self.threshold)
        self._standing_down = still_over
        if not still_over:
            return None
        return STILL_OVER_NOTICE.format(
            tokens=self._baseline,
            percent=usage_percent(self._baseline, self.context_limit),
            limit=self.context_limit,
            threshold=self._threshold_percent(),
        )

    def _threshold_percent(self) -> int:
        return int(self.threshold * 100)

    def _token_counter(self) -> TokenCounter:
        if self._counter is None:
            from context_mgmt.tokens import default_counter

            self._counter = default_counter()
        return self._counter
