"""The status line: model, permission mode and how full the context is.

`StatusInfo` is refreshed from the reply loop's events (usage after each model call,
compactions, `/clear`, `/model`, `/mode`); the prompt's bottom toolbar renders it with
`status_text`, which is pure so its wording is tested directly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from gosling.agent.events import CompactionFinished, Event, UsageUpdate
from gosling.context_mgmt import auto_compact_enabled
from gosling.context_mgmt.context_size import usage_percent


@dataclass(frozen=True)
class StatusInfo:
    model: str
    mode: str
    context_tokens: int
    context_limit: int
    threshold: float
    auto_compact: bool = True
    """False when nothing compacts at the threshold (strategy `mask`, a provider that manages
    its own context, or the threshold switched off)."""

    def after(self, event: Event) -> StatusInfo:
        """The status once `event` has happened."""
        if isinstance(event, UsageUpdate):
            return replace(
                self, context_tokens=event.context_tokens, context_limit=event.context_limit
            )
        if isinstance(event, CompactionFinished):
            return replace(self, context_tokens=event.tokens_after)
        return self


def compact_number(n: int) -> str:
    """12 -> "12", 12_345 -> "12.3k", 1_200_000 -> "1.2M"."""
    if abs(n) < 1000:
        return str(n)
    if abs(n) < 1_000_000:
        return f"{n / 1000:.1f}".removesuffix(".0") + "k"
    return f"{n / 1_000_000:.1f}".removesuffix(".0") + "M"


def status_text(info: StatusInfo, width: int | None = None) -> str:
    """`model · mode · 12.3k/200k tokens (6%) · compacts in 147.7k`, shortened to fit
    `width` columns when given: the least useful detail goes first, the model name is cut
    last."""
    limit = info.context_limit
    used = compact_number(info.context_tokens)
    if limit > 0:
        percent = usage_percent(info.context_tokens, limit)
        usage, short_usage = f"{used}/{compact_number(limit)} tokens ({percent}%)", f"{percent}%"
    else:
        usage = short_usage = f"{used} tokens"
    if info.auto_compact and auto_compact_enabled(info.threshold) and limit > 0:
        left = math.floor(limit * info.threshold) - info.context_tokens
        outlook = f"compacts in {compact_number(left)}" if left > 0 else "compacts on the next call"
    else:
        outlook = "auto-compact off"
    full = " · ".join([info.model, info.mode, usage, outlook])
    if width is None:
        return full
    for parts in (
        [info.model, info.mode, usage],
        [info.model, info.mode, short_usage],
        [info.model, short_usage],
    ):
        if len(full) <= width:
            return full
        full = " · ".join(parts)
    tail = f" · {short_usage}"
    return (
        _cut(info.model, width - len(tail)) + tail if width > len(tail) + 4 else _cut(full, width)
    )


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"
