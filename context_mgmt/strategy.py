"""`context_strategy`: which of the context tools the reply loop uses, as one pure decision.

- `summarize` (goose-like): old tool calls are summarized by the fast model in the background,
  and the conversation is compacted at the threshold and on overflow.
- `mask`: old tool outputs become placeholders (no model calls); compaction runs only as the
  last resort when a request overflows the window.
- `hybrid` (default): masking first, so compaction comes much later; compaction at the
  threshold stays as the backstop, and on overflow.

A provider that manages its own context (hosted agents, `CompactingProvider`) is never
summarized or compacted by gosling; masking still applies, since it only changes what is sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

ContextStrategy = Literal["summarize", "mask", "hybrid"]
CONTEXT_STRATEGIES: tuple[ContextStrategy, ...] = get_args(ContextStrategy)
DEFAULT_CONTEXT_STRATEGY: ContextStrategy = "hybrid"


@dataclass(frozen=True)
class ContextPlan:
    """What the reply loop does to keep the context in bounds."""

    summarize_tool_pairs: bool
    """Run the background tool-pair summarizer."""
    mask_tool_results: bool
    """Mask old tool results (`messages_to_mask`, `apply_masking`)."""
    compact_at_threshold: bool
    """Compact before a call when the context passes the auto-compact threshold."""
    compact_on_overflow: bool
    """Compact and retry once when a request overflows the window."""


def context_plan(
    strategy: str,
    *,
    tool_pair_summarization: bool = True,
    manages_own_context: bool = False,
) -> ContextPlan:
    """The plan for `strategy`. `tool_pair_summarization` is the config switch of the
    summarizer (it only matters for `summarize`). Raises ValueError for an unknown strategy."""
    if strategy not in CONTEXT_STRATEGIES:
        choices = ", ".join(CONTEXT_STRATEGIES)
        raise ValueError(f"unknown context_strategy {strategy!r}; choose one of: {choices}")
    gosling_compacts = not manages_own_context
    return ContextPlan(
        summarize_tool_pairs=strategy == "summarize"
        and tool_pair_summarization
        and gosling_compacts,
        mask_tool_results=strategy in ("mask", "hybrid"),
        compact_at_threshold=strategy in ("summarize", "hybrid") and gosling_compacts,
        compact_on_overflow=gosling_compacts,
    )
