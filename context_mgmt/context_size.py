"""How full the context is, where that figure comes from, and when it is too full.

`needs_compaction` is the threshold rule (reference §2), a pure function of three numbers so
the reply loop, `/context` and tests agree on it. `ContextSize` keeps the best figure for one
session's context, from the best source it has:

- `reported`: the provider's own count from the last call (its input plus its output, which
  the next request carries too), plus a local estimate of agent-visible messages added since;
- `stored`: the count the session last recorded (a resumed session), plus what was added;
- `retained`: right after a compaction, the estimate of what was kept, never the summary's
  raw output size and never the stale pre-compaction figure, so it cannot compact every turn
  (reference §13 items 2 and 3);
- `estimate`: before any of that, a local count of the agent-visible messages.

What to do about the figure (compact, stand down, give up) is the session's
`ContextPipeline`'s business, not this module's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal

from gosling.conversation import Message

if TYPE_CHECKING:
    from gosling.context_mgmt.tokens import TokenCounter

DEFAULT_COMPACTION_THRESHOLD = 0.8
"""Compact once the context holds more than this share of the model's window."""

AUTO_COMPACT_THRESHOLD_KEY = "auto_compact_threshold"
AUTO_COMPACT_THRESHOLD_ENV = "GOSLING_AUTO_COMPACT_THRESHOLD"

TokenSource = Literal["reported", "stored", "retained", "estimate"]


def auto_compact_enabled(threshold: float) -> bool:
    """Only a share strictly between 0 and 1 enables auto-compaction; 0, 1 or more turn it
    off (so `auto_compact_threshold = 0` is the documented way to disable it)."""
    return 0.0 < threshold < 1.0


def needs_compaction(current_tokens: int, context_limit: int, threshold: float) -> bool:
    """True when `current_tokens` fill strictly more than `threshold` of `context_limit`.

    Equality does not trigger. An unknown or zero window (`context_limit <= 0`) never
    triggers: without a window there is no share to compare.
    """
    if not auto_compact_enabled(threshold) or context_limit <= 0 or current_tokens <= 0:
        return False
    ratio = current_tokens / context_limit
    return math.isfinite(ratio) and ratio > threshold


def usage_percent(tokens: int, context_limit: int) -> int:
    """Share of the window in percent, rounded half away from zero like goose's `f64::round`
    (2,500 of 100,000 is 3%, where Python's `round` would say 2%); 0 when the window is
    unknown. Exact integer arithmetic, so no float edge case flips a notice."""
    if context_limit <= 0:
        return 0
    magnitude = (200 * abs(tokens) + context_limit) // (2 * context_limit)
    return magnitude if tokens >= 0 else -magnitude


class ContextSize:
    """The size of one session's context: a baseline from the best source, plus an estimate
    of the agent-visible messages the baseline does not cover yet."""

    def __init__(self, counter: TokenCounter, *, overhead_tokens: int = 0) -> None:
        self._counter = counter
        self.overhead_tokens = overhead_tokens
        """Tokens outside the messages (system prompt, tool schemas), added to local
        estimates; provider reports and stored counts already include them."""
        self._baseline: int | None = None
        self._source: TokenSource = "estimate"
        self._covered: tuple[Message, ...] = ()
        """The messages the baseline accounts for, in order."""
        self._covered_ids: set[str] | None = None

    @property
    def source(self) -> TokenSource:
        return self._source

    def measure(self, messages: Sequence[Message]) -> tuple[int, TokenSource]:
        """Current context size of `messages` (the agent view) and where it comes from."""
        if self._baseline is None:
            estimate = self._counter.count_chat("", messages) + self.overhead_tokens
            return estimate, "estimate"
        added = self._counter.count_messages(self._added_since(messages))
        return self._baseline + added, self._source

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

    def set(self, tokens: int, source: TokenSource, covered: Iterable[Message]) -> None:
        """`tokens` is the size of `covered` (with the overhead), as `source` counted it."""
        self._baseline = tokens
        self._source = source
        self._covered, self._covered_ids = tuple(covered), None

    def forget(self) -> None:
        """Back to estimating (the model starts afresh: `/clear`)."""
        self._baseline = None
        self._source = "estimate"
        self._covered, self._covered_ids = (), None
