"""When to compact: the auto-compaction threshold (reference §2).

The check is a pure function of three numbers so the reply loop, `/context` and tests all
agree on it. Where the token figure comes from (provider report or local estimate) is
`ContextBudget`'s business, not this module's.
"""

from __future__ import annotations

import math

DEFAULT_COMPACTION_THRESHOLD = 0.8
"""Compact once the context holds more than this share of the model's window."""

AUTO_COMPACT_THRESHOLD_KEY = "auto_compact_threshold"
AUTO_COMPACT_THRESHOLD_ENV = "GOSLING_AUTO_COMPACT_THRESHOLD"


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
