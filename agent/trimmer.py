"""`Trimmer`: one session's decisions about old tool output under the provider's prompt cache.

The pure rules live in `context_mgmt` (`trim_plan`: what a trim would do and when it pays;
`folding`: the note old placeholders fold into). This is the state one session needs to use
them on every model call without rescanning its history:

- the `TrimClock` (how long trimmable output has been kept since the last trim);
- where the view is settled (per view generation: before that index nothing can change by a
  trim, so the next plan starts there; one cursor for masking, one for folding);
- the calls a fold could not hide (they stay placeholders and no longer hold the cursor);
- the cache anchor: with Anthropic's cache, the last user message before the part a trim can
  still change is marked in each request (`MessageMetadata.cache_anchor`), a fourth
  breakpoint, so a trim further back than Anthropic's 20-block lookback re-sends only what
  follows it.

The session's `ContextPipeline` owns one per provider (`agent/context_pipeline.py`) and
asks it before each model call: `mask_and_fold` (masking strategies) or `summaries_pay`
(tool-pair summaries), and `anchored` on the request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gosling.context_mgmt.folding import fold_calls
from gosling.context_mgmt.masking import MaskingPresenter
from gosling.context_mgmt.tokens import TokenCounter
from gosling.context_mgmt.tool_pairs import TOOL_SUMMARY_KIND, ends_with_misplaced_note
from gosling.context_mgmt.trim_plan import TrimClock, TrimPlan, change_figures, plan_trim
from gosling.conversation import Message, MessageMetadata
from gosling.providers.cache_cost import break_even_calls
from gosling.providers.prompt_cache import PromptCache

if TYPE_CHECKING:
    from gosling.agent.config import Settings
    from gosling.agent.session import AgentSession

SUMMARY_NOTE_TOKENS = 60
"""About what one tool pair's summary line costs in the view."""
SUMMARY_PROMPT_TOKENS = 300
"""About the instructions of one tool-pair summary call, besides the pair itself."""


@dataclass(frozen=True)
class TrimOutlook:
    """What a trim of old tool output would save and re-send now, and after how many calls
    of keeping the output it would pay for itself (`/context`)."""

    saved_tokens: int
    resent_tokens: int
    break_even_calls: float
    cache: str
    """The provider's cache mechanism: breakpoints, prefix or none."""
    patience: float


@dataclass(frozen=True)
class Trimmed:
    """What `Trimmer.mask_and_fold` changed: metadata flips, the note to append, and the
    call ids masked and folded (for the loop's events)."""

    flips: dict[str, MessageMetadata]
    appended: tuple[Message, ...] = ()
    masked: tuple[str, ...] = ()
    folded: tuple[str, ...] = ()


class Trimmer:
    """One session's trimming state for one provider (see the module docstring)."""

    def __init__(
        self,
        cache: PromptCache,
        settings: Settings,
        counter: TokenCounter,
        present: MaskingPresenter,
    ) -> None:
        self.cache = cache
        self.settings = settings
        self.counter = counter
        self.present = present
        self.clock = TrimClock(cache, settings.trim_patience)
        self._settled = (-1, 0, 0)
        """(view generation, fold index, mask index): the view's messages before the fold
        index cannot change by a trim, those before the mask index not by masking."""
        self._unfoldable: set[str] = set()
        """Calls a fold could not hide (their removal would leave an invalid seam)."""
        self._anchor: tuple[int, str] | None = None
        """(index, id) in the view of the request's cache anchor (`_place_anchor`)."""

    @property
    def lookback(self) -> int:
        """How far before its breakpoints the provider finds a cached prefix (0: anywhere)."""
        return self.cache.lookback if self.cache.mechanism == "breakpoints" else 0

    def restart(self) -> None:
        """The whole prompt changed anyway (a compaction, `/clear`): a new cycle starts."""
        self.clock.restart()

    # -- masking and folding ----------------------------------------------------------------------

    def mask_and_fold(self, session: AgentSession) -> Trimmed:
        """Mask and fold old tool output when the cost model says it pays now, and park a
        folding note a stopped turn left stranded. Nothing is committed here."""
        messages = session.messages
        session.view.sync(messages)
        view = session.view.messages()
        generation = session.view.generation
        folds = _ends_with_tool_results(view)
        if self._settled[0] != generation:
            self._settled = (generation, 0, 0)
        _, fold_from, mask_from = self._settled
        plan = self._plan(session, view, folds, start=fold_from if folds else mask_from)
        if folds:
            self._settled = (generation, plan.settled, plan.settled)
        else:
            self._settled = (generation, fold_from, plan.settled)
        self._place_anchor(view, self._settled[1])
        due = self.clock.due(plan)
        if not due and not ends_with_misplaced_note(messages):
            return Trimmed({})
        flips: dict[str, MessageMetadata] = {}
        masked: list[str] = []
        if due:
            chosen = set(plan.mask)
            for message in messages:
                if message.id in chosen:
                    flips[message.id] = message.metadata.with_masked()
                    masked += [r.id for r in message.tool_requests]
                    masked += [r.id for r in message.tool_responses]
        current = with_flips(messages, flips)
        applied = fold_calls(current, plan.fold if due else ())
        self._unfoldable.update(applied.ids("dropped"))
        unique = tuple(dict.fromkeys(masked))
        if not applied.changed:
            return Trimmed(flips, masked=unique)
        hidden = set(applied.flipped_ids)
        flips.update({m.id: m.metadata for m in applied.messages if m.id in hidden})
        return Trimmed(flips, applied.appended, unique, tuple(applied.ids("applied")))

    def outlook(self, session: AgentSession) -> TrimOutlook:
        """What trimming would do now and when it pays (`/context`). Changes nothing."""
        session.view.sync(session.messages)
        view = session.view.messages()
        plan = self._plan(session, view, _ends_with_tool_results(view))
        return TrimOutlook(
            saved_tokens=plan.saved_tokens,
            resent_tokens=plan.resent_tokens,
            break_even_calls=break_even_calls(self.cache, plan.resent_tokens, plan.saved_tokens),
            cache=self.cache.mechanism,
            patience=self.clock.patience,
        )

    def _plan(
        self, session: AgentSession, view: Sequence[Message], folds: bool, start: int = 0
    ) -> TrimPlan:
        return plan_trim(
            view,
            self.counter.count_message,
            self.present.preview,
            keep_last=self.settings.mask_keep_last,
            keep_tokens=self.settings.mask_keep_tokens,
            lookback=self.lookback,
            start=start,
            can_fold=folds,
            view_tokens=session.view.tokens,
            anchor=self._anchor[0] if self._anchor else None,
            unfoldable=self._unfoldable,
        )

    # -- the cache anchor ---------------------------------------------------------------------

    def _place_anchor(self, view: Sequence[Message], settled: int) -> None:
        if self.cache.mechanism != "breakpoints":
            self._anchor = None
            return
        index = min(settled, len(view)) - 1
        while index > 0 and view[index].role != "user":
            index -= 1
        self._anchor = (index, view[index].id) if index > 0 else None

    def anchored(self, request: list[Message]) -> list[Message]:
        """`request` with its cache anchor marked, if it has one."""
        if self._anchor is None:
            return request
        index, message_id = self._anchor
        if index >= len(request) or request[index].id != message_id:
            return request
        message = request[index]
        marked = message.metadata.model_copy(update={"cache_anchor": True})
        return [*request[:index], message.with_metadata(marked), *request[index + 1 :]]

    # -- tool-pair summaries ------------------------------------------------------------------

    def summaries_pay(self, session: AgentSession, tool_ids: Sequence[str]) -> bool:
        """Whether summarizing `tool_ids` now pays under the provider's prompt cache: the
        notes will hide their pairs, which changes the prompt from the first of them on. A
        summary call is paid whether or not its note is ever placed, so this decides before
        the summarizer runs, with the calls themselves counted into the trim's cost."""
        wanted = set(tool_ids)
        session.view.sync(session.messages)
        view = session.view.messages()
        pairs = {m.id for m in view if _call_ids(m) & wanted}
        count = self.counter.count_message
        note = SUMMARY_NOTE_TOKENS * len(wanted)
        saved, resent = change_figures(
            view, dict.fromkeys(pairs, 0), count, lookback=self.lookback, added_tokens=note
        )
        # Each summary is its own call: the pair and the prompt as new input, the note out.
        asked: float = sum(count(m) for m in view if m.id in pairs)
        asked += len(wanted) * (SUMMARY_PROMPT_TOKENS + SUMMARY_NOTE_TOKENS * self.cache.output)
        plan = TrimPlan(
            fold=tuple(tool_ids),
            saved_tokens=max(saved, 0),
            resent_tokens=resent,
            paid_once=asked,
        )
        return self.clock.due(plan)

    def count_call(self) -> None:
        """A model call with nothing to trim still counts into the clock's cycle."""
        self.clock.due(TrimPlan())


def with_flips(messages: Sequence[Message], flips: Mapping[str, MessageMetadata]) -> list[Message]:
    """`messages` with the metadata changes `flips` names (by message id) applied."""
    return [m.with_metadata(flips[m.id]) if m.id in flips else m for m in messages]


def _ends_with_tool_results(view: Sequence[Message]) -> bool:
    """A folding note can go after the last message (tool results, notes aside)."""
    for message in reversed(view):
        if message.metadata.kind == TOOL_SUMMARY_KIND:
            continue
        return message.effective_role == "tool"
    return False


def _call_ids(message: Message) -> set[str]:
    return {r.id for r in message.tool_requests} | {r.id for r in message.tool_responses}
