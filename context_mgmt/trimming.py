"""`ContextTrimmer`: what happens to old tool output before each model call.

One object per session, shared by the live reply loop (which persists the changes) and by
`context replay` (which applies them in memory), so a replay measures exactly what the loop
does. `context_strategy` picks the plan (`strategy.context_plan`):

- masking (`mask`, `hybrid`): old tool results get the `masked` flag and are shown as
  placeholders, and old calls with long arguments are shown with those arguments cut to
  their head. The masked set only moves once per batch of tool calls, so the scan runs only
  then;
- tool-pair summaries (`summarize`): batches are summarized by the fast model in the
  background and applied before a later call, when a batch is ready.

`step()` returns the changes; the caller applies them (metadata flips, appended notes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from context_mgmt.masking import MASK_BATCH_SIZE, MASK_KEEP_LAST, messages_to_mask
from context_mgmt.pair_scheduler import ToolPairSummarizer
from context_mgmt.strategy import ContextPlan
from context_mgmt.threshold import DEFAULT_COMPACTION_THRESHOLD
from context_mgmt.tokens import TokenCounter
from conversation import Message, MessageMetadata
from providers import Provider, Usage


@dataclass(frozen=True)
class TrimChanges:
    """What one step decided. Empty when nothing changes."""

    flips: Mapping[str, MessageMetadata] = field(default_factory=dict)
    """New metadata for existing messages (masked flags, hidden tool pairs)."""
    appended: tuple[Message, ...] = ()
    """Summary notes to append after the existing messages."""
    masked_tool_ids: tuple[str, ...] = ()
    """Tool call ids whose output or arguments are now masked (each id once)."""
    summarized_tool_ids: tuple[str, ...] = ()
    usage: tuple[Usage, ...] = ()
    """Usage of summary calls that finished since the last step."""

    @property
    def changed(self) -> bool:
        return bool(self.flips or self.appended)


class ContextTrimmer:
    def __init__(
        self,
        plan: ContextPlan,
        summarizer: Provider | None = None,
        *,
        keep_last: int = MASK_KEEP_LAST,
        cutoff: int | None = None,
        threshold: float = DEFAULT_COMPACTION_THRESHOLD,
        counter: TokenCounter | None = None,
    ) -> None:
        self.plan = plan
        self.keep_last = keep_last
        self._mask_step = -1
        self._scheduled_at: tuple[int, int] = (-1, -1)
        self.pairs = (
            ToolPairSummarizer(summarizer, cutoff=cutoff, threshold=threshold, counter=counter)
            if plan.summarize_tool_pairs and summarizer is not None
            else None
        )

    def step(
        self, messages: Sequence[Message], visible_tool_calls: int, protect_last_n: int
    ) -> TrimChanges:
        """Decide before a model call. `visible_tool_calls` counts the tool requests the model
        can see; `protect_last_n` is the current turn's calls, never summarized."""
        flips: dict[str, MessageMetadata] = {}
        masked: list[str] = []
        if self.plan.mask_tool_results:
            step = max(visible_tool_calls - self.keep_last, 0) // MASK_BATCH_SIZE
            if step != self._mask_step:
                self._mask_step = step
                ids = set(messages_to_mask(messages, keep_last=self.keep_last))
                for message in messages:
                    if message.id in ids:
                        flips[message.id] = message.metadata.with_masked()
                        masked += [r.id for r in message.tool_requests]
                        masked += [r.id for r in message.tool_responses]
        masked = list(dict.fromkeys(masked))
        if self.pairs is None:
            return TrimChanges(flips, masked_tool_ids=tuple(masked))
        appended: tuple[Message, ...] = ()
        summarized: list[str] = []
        current = messages
        if self.pairs.ready:
            current = _with_flips(messages, flips) if flips else messages
            applied = self.pairs.apply_ready(current)
            if applied.changed:
                hidden = set(applied.flipped_ids)
                flips.update({m.id: m.metadata for m in applied.messages if m.id in hidden})
                appended = applied.appended
                summarized = applied.ids("applied")
                current = applied.messages
                visible_tool_calls = sum(
                    len(m.tool_requests) for m in current if m.metadata.agent_visible
                )
        usage = tuple(self.pairs.take_usage())
        # Selection scans the history: redo it only when the calls or the protected tail
        # changed (a new turn starts with nothing protected).
        key = (visible_tool_calls, protect_last_n)
        if key != self._scheduled_at:
            self._scheduled_at = key
            self.pairs.maybe_schedule(current, protect_last_n)
        return TrimChanges(flips, appended, tuple(masked), tuple(summarized), usage)

    async def wait_for_summaries(self) -> None:
        """Let a running summary batch finish (replays use this to model the best case)."""
        if self.pairs is not None:
            await self.pairs.collect()

    async def close(self) -> None:
        """Cancel background summaries; their results are dropped."""
        if self.pairs is not None:
            await self.pairs.cancel()


def _with_flips(messages: Sequence[Message], flips: Mapping[str, MessageMetadata]) -> list[Message]:
    return [m.with_metadata(flips[m.id]) if m.id in flips else m for m in messages]


def apply_changes(messages: Sequence[Message], changes: TrimChanges) -> list[Message]:
    """`messages` with the changes applied: for callers that keep messages in memory."""
    return [*_with_flips(messages, changes.flips), *changes.appended]
