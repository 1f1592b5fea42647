"""What a replay reports: per model call, per strategy, per transcript (`agent.replay.run`).

Frozen values with `to_dict()` for `--json` and the benchmark; the totals are derived from
the calls, so they cannot disagree with them. What happened before a call is the reply
loop's own events (`agent.events`), as the loop yielded them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from gosling.agent.events import CompactionFinished, ContextTrimmed, ErrorEvent, Event
from gosling.context_mgmt.context_size import DEFAULT_COMPACTION_THRESHOLD
from gosling.context_mgmt.masking import MASK_KEEP_LAST
from gosling.context_mgmt.tool_pairs import compute_tool_call_cutoff
from gosling.context_mgmt.trim_plan import MASK_KEEP_TOKENS, TRIM_PATIENCE
from gosling.providers.prompt_cache import CacheFamily

ReplayStrategy = Literal["none", "summarize", "mask", "hybrid"]
REPLAY_STRATEGIES: tuple[ReplayStrategy, ...] = get_args(ReplayStrategy)
DEFAULT_REPLAY_CONTEXT_LIMIT = 128_000

SystemPromptSource = Literal["transcript", "stand-in", "option"]


@dataclass(frozen=True)
class ReplayOptions:
    """The context policy's knobs, as `gosling context replay` exposes them."""

    context_limit: int = DEFAULT_REPLAY_CONTEXT_LIMIT
    threshold: float = DEFAULT_COMPACTION_THRESHOLD
    keep_last: int = MASK_KEEP_LAST
    """Tool results masking keeps verbatim (config `mask_keep_last`)."""
    keep_tokens: int = MASK_KEEP_TOKENS
    """...while they hold at most this many tokens (config `mask_keep_tokens`)."""
    patience: float = TRIM_PATIENCE
    """When trimming pays (config `trim_patience`)."""
    tool_call_cutoff: int | None = None
    """Tool calls kept before pair summaries start; None derives it from the window."""
    system_prompt: str | None = None
    """Overrides the transcript's system prompt (and the stand-in when it has none)."""
    cache_family: CacheFamily = "anthropic"
    """How requests are priced, and how the replayed pipeline decides when trimming pays:
    this provider family's prompt cache (`prompt_cache_for`)."""

    def __post_init__(self) -> None:
        if self.context_limit <= 0:
            raise ValueError(f"context_limit must be positive, got {self.context_limit}")
        if self.keep_last < 0:
            raise ValueError(f"keep_last must be 0 or more, got {self.keep_last}")
        if self.keep_tokens < 0:
            raise ValueError(f"keep_tokens must be 0 or more, got {self.keep_tokens}")

    @property
    def cutoff(self) -> int:
        if self.tool_call_cutoff is not None:
            return self.tool_call_cutoff
        return compute_tool_call_cutoff(self.context_limit, self.threshold)

    def to_dict(self) -> dict[str, Any]:
        return {
            "context_limit": self.context_limit,
            "threshold": self.threshold,
            "keep_last": self.keep_last,
            "keep_tokens": self.keep_tokens,
            "patience": self.patience,
            "tool_call_cutoff": self.cutoff,
            "cache_family": self.cache_family,
        }


@dataclass(frozen=True)
class ReplayCall:
    """One model call: what it would have sent."""

    call: int
    """1-based number of the call in the transcript."""
    tokens: int
    """Tokens of the request: system prompt, view and per-turn context."""
    messages: int
    """Messages in the view."""
    masked_tokens: int
    """Tokens masking saved in this request (placeholders and cut arguments)."""
    events: tuple[Event, ...] = ()
    """The loop's context events right before this call (trimming, compaction, notices)."""
    overflow: bool = False
    """The request was over the window when it was sent (only `none` sends such a request:
    a provider would reject it)."""
    issues: tuple[str, ...] = ()
    """What `fix_conversation` had to repair in the view: empty when the view was valid."""
    cache_read: int = 0
    """Tokens of the request served from the prompt cache (`ReplayOptions.cache_family`)."""
    cache_write: int = 0
    cost: float = 0.0
    """What the call costs, input and reply, in units of one new input token."""

    @property
    def valid(self) -> bool:
        return not self.issues

    @property
    def labels(self) -> tuple[str, ...]:
        """Short names of what happened before the call, for tables."""
        return tuple(label for e in self.events if (label := event_label(e)) is not None) + (
            ("overflow",) if self.overflow else ()
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "call": self.call,
            "tokens": self.tokens,
            "messages": self.messages,
            "masked_tokens": self.masked_tokens,
            "labels": list(self.labels),
            "events": [e.to_json() for e in self.events],
            "overflow": self.overflow,
            "valid": self.valid,
            "issues": list(self.issues),
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
            "cost": round(self.cost, 1),
        }


def event_label(event: Event) -> str | None:
    """`masked`, `folded`, `summarized`, `compaction`, `overflow compaction` or `failed`."""
    if isinstance(event, ContextTrimmed):
        return {"mask": "masked", "fold": "folded"}.get(event.strategy, "summarized")
    if isinstance(event, CompactionFinished):
        return "compaction" if event.trigger != "overflow" else "overflow compaction"
    if isinstance(event, ErrorEvent):
        return "failed"
    return None


@dataclass(frozen=True)
class StrategyReplay:
    """One strategy's replay of one transcript."""

    strategy: ReplayStrategy
    calls: tuple[ReplayCall, ...]
    compactions: int = 0
    """Compactions of either trigger; `overflow_compactions` of them were overflow-driven."""
    overflow_compactions: int = 0
    pair_summaries: int = 0
    """Tool pairs hidden behind a summary note."""
    masked_results: int = 0
    """Tool-result messages flagged masked."""
    side_calls: int = 0
    """Summarizer calls (compactions, including ladder retries, and tool-pair notes)."""
    side_input_tokens: int = 0
    """Input tokens of the summarizer calls: their cost on top of `tokens_sent`."""
    side_cost: float = 0.0
    """What the summarizer calls cost: each prompt is new (nothing in it was sent before),
    their replies at the output price; part of `cost`."""
    failures: tuple[str, ...] = ()
    later_uses: int = 0
    """(tool output, later assistant message) pairs where the reply used something
    distinctive first seen in that output (`context_mgmt.later_use`)."""
    hidden_then_used: int = 0
    """Of `later_uses`, those whose output the call's view did not show whole."""
    receipts: tuple[dict[str, Any], ...] = ()
    """Each compaction's receipt (`CompactionReceipt.to_json()` with its trigger): what the
    hidden originals held that the summary did not."""

    @property
    def tokens_sent(self) -> int:
        return sum(c.tokens for c in self.calls)

    @property
    def cost(self) -> float:
        """What the strategy costs in units of one new input token: every model call, and
        the summarizer calls it made (`side_cost`)."""
        return sum(c.cost for c in self.calls) + self.side_cost

    @property
    def cached_share(self) -> float:
        sent = self.tokens_sent
        return sum(c.cache_read for c in self.calls) / sent if sent else 0.0

    @property
    def peak_context(self) -> int:
        return max((c.tokens for c in self.calls), default=0)

    @property
    def tokens_masked(self) -> int:
        return sum(c.masked_tokens for c in self.calls)

    @property
    def overflows(self) -> int:
        return sum(c.overflow for c in self.calls)

    @property
    def all_valid(self) -> bool:
        return all(c.valid for c in self.calls)

    def to_dict(self, *, calls: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "tokens_sent": self.tokens_sent,
            "peak_context": self.peak_context,
            "compactions": self.compactions,
            "overflow_compactions": self.overflow_compactions,
            "pair_summaries": self.pair_summaries,
            "masked_results": self.masked_results,
            "tokens_masked": self.tokens_masked,
            "overflows": self.overflows,
            "side_calls": self.side_calls,
            "side_input_tokens": self.side_input_tokens,
            "side_cost": round(self.side_cost, 1),
            "valid": self.all_valid,
            "failures": list(self.failures),
            "cost": round(self.cost),
            "cached_share": round(self.cached_share, 4),
            "later_uses": self.later_uses,
            "hidden_then_used": self.hidden_then_used,
            "receipts": list(self.receipts),
        }
        if calls:
            data["calls"] = [c.to_dict() for c in self.calls]
        return data


@dataclass(frozen=True)
class TranscriptReplay:
    """Every strategy's replay of one transcript (one run of a file)."""

    source: str
    source_format: str
    run: int
    runs: int
    title: str | None
    messages: int
    model_calls: int
    tool_calls: int
    source_repairs: tuple[str, ...]
    system_prompt: SystemPromptSource
    system_tokens: int
    options: ReplayOptions
    results: Mapping[ReplayStrategy, StrategyReplay] = field(default_factory=dict)

    @property
    def name(self) -> str:
        stem = Path(self.source).name
        return f"{stem}#{self.run}" if self.runs > 1 else stem

    def relative(self, strategy: ReplayStrategy, to: ReplayStrategy = "none") -> float | None:
        """Tokens `strategy` sent as a share of what `to` sent (None if either is missing)."""
        mine, base = self.results.get(strategy), self.results.get(to)
        if mine is None or base is None or base.tokens_sent == 0:
            return None
        return mine.tokens_sent / base.tokens_sent

    def relative_cost(self, strategy: ReplayStrategy, to: ReplayStrategy = "none") -> float | None:
        """What `strategy` cost as a share of what `to` cost (None if either is missing)."""
        mine, base = self.results.get(strategy), self.results.get(to)
        if mine is None or base is None or base.cost == 0:
            return None
        return mine.cost / base.cost

    def to_dict(self, *, calls: bool = True) -> dict[str, Any]:
        strategies: dict[str, Any] = {}
        for name, result in self.results.items():
            data = result.to_dict(calls=calls)
            relative = self.relative(name)
            data["relative_to_none"] = None if relative is None else round(relative, 4)
            cost = self.relative_cost(name)
            data["cost_relative_to_none"] = None if cost is None else round(cost, 4)
            strategies[name] = data
        return {
            "name": self.name,
            "source": self.source,
            "format": self.source_format,
            "run": self.run,
            "runs": self.runs,
            "title": self.title,
            "messages": self.messages,
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "source_repairs": list(self.source_repairs),
            "system_prompt": self.system_prompt,
            "system_tokens": self.system_tokens,
            "options": self.options.to_dict(),
            "strategies": strategies,
        }
