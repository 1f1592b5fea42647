"""How long a summarizer call may take: in proportion to what it has to read.

A fixed timeout fails exactly the sessions that most need compacting, the large ones. The
deadline is `SECONDS_PER_1K_INPUT_TOKENS` per thousand input tokens, never below `floor` and
never above `cap` (config `compaction_timeout_floor` / `compaction_timeout_cap`). It replaces
the provider's `request_timeout` for the summarizer's calls and bounds each of them as a
whole, retries of a dropped connection included.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_FLOOR = 120.0
DEFAULT_CAP = 1800.0
SECONDS_PER_1K_INPUT_TOKENS = 2.0
"""Generous for prefill plus a long summary: 160k tokens get 320 s."""
SETTINGS = "compaction_timeout_floor / compaction_timeout_cap in config"


@dataclass(frozen=True)
class SummaryDeadline:
    floor: float = DEFAULT_FLOOR
    cap: float = DEFAULT_CAP

    def __post_init__(self) -> None:
        if not 0 < self.floor <= self.cap:
            raise ValueError(
                f"compaction_timeout_floor ({self.floor:g}) must be above 0 and at most "
                f"compaction_timeout_cap ({self.cap:g}); raise the cap or lower the floor"
            )

    def seconds(self, input_tokens: int) -> float:
        """The deadline of one summarizer call that sends `input_tokens`."""
        scaled = input_tokens / 1000 * SECONDS_PER_1K_INPUT_TOKENS
        return min(self.cap, max(self.floor, scaled))


DEFAULT_DEADLINE = SummaryDeadline()
