"""When trimming old tool output pays, once prompt caching is priced in (issue 16).

Trimming (masking outputs to placeholders, folding old placeholders into one note) makes
every later request smaller, but it changes the prompt: from the first changed message on,
the provider's cache no longer matches, so that suffix is paid once more at the price of a
new input (OpenAI) or a cache write (Anthropic) instead of a cache read. Trimming on every
call would re-send the recent outputs every time; never trimming reads an ever longer
history on every call.

`plan_trim` says what a trim would do right now: which messages it masks, which old calls
it folds, how many tokens that takes off every later request (`saved_tokens`) and how many
tokens after the first change are sent again (`resent_tokens`). `TrimClock` decides when.
Between two trims, each call pays `saved x read price` for the output it keeps, and the
trim that ends the cycle pays its miss once, `resent x (first-call price - read price)`.
The clock ends the cycle when keeping the output one more call would cost more than the
cycle's average cost per call so far, the miss included: the stopping rule that minimises
the long-run cost per call. For output that piles up at a steady rate it trims once the
keeping has cost as much as the miss (the economic order quantity: batches of about five
8 KB outputs under Anthropic's prices); a big output that arrives late in a cycle is trimmed
as soon as it pays, one that arrives early waits. Without a cache (every token new input on
every call) it trims as soon as there is anything to save. `trim_patience` scales the miss:
2 (the default) waits longer than the break-even point, which costs a few percent on a
long loop but keeps trims from landing just before a session ends, when they cannot pay
back (the curve is in docs/context-pipeline.md).

What stays whole: the newest calls, up to `keep_last` of them and up to `keep_tokens` of
their output (always at least the newest one), so a session of small outputs keeps its
last ten calls and a session of 8 KB outputs its last one.

Graded: a call first becomes a placeholder (its tool, arguments and size stay in view); a
later trim folds the placeholders of the previous one into a single note
(`context_mgmt.folding`), so the request size settles however long the session runs.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from gosling.context_mgmt.masking import (
    MASK_KEEP_LAST,
    has_long_arguments,
    messages_to_mask_among,
    worth_masking,
)
from gosling.context_mgmt.tool_pairs import TOOL_SUMMARY_KIND
from gosling.conversation import Message
from gosling.providers.cache_cost import break_even_calls
from gosling.providers.prompt_cache import PromptCache

MASK_KEEP_TOKENS = 4_000
"""Output tokens of the newest calls kept whole at most (config `mask_keep_tokens`); the
newest call is kept whatever its size."""
TRIM_PATIENCE = 2.0
"""How many times its real cost a trim's cache miss counts when the clock decides (config
`trim_patience`; see the module docstring)."""
FOLD_NOTE_TOKENS = 400
"""About what a folding note costs in the view (it is bounded: see `context_mgmt.folding`)."""


@dataclass(frozen=True)
class TrimPlan:
    """What trimming now would do to the view, and its two figures."""

    mask: tuple[str, ...] = ()
    """Ids of messages to mask."""
    fold: tuple[str, ...] = ()
    """Tool call ids to fold (their outputs are placeholders already)."""
    saved_tokens: int = 0
    """Tokens every later request would be smaller by."""
    resent_tokens: int = 0
    """Tokens from the first changed message to the end, after the trim."""
    paid_once: float = 0.0
    """Any other cost of the trim, in new input tokens (the summary calls it needs)."""
    settled: int = 0
    """Messages of the view before this index cannot change by a later trim (until the view
    is rebuilt): the next plan may start there. Planned without `can_fold`, placeholders
    waiting to be folded do not count, so this is only where masking may start."""

    @property
    def empty(self) -> bool:
        return not (self.mask or self.fold)


def kept_boundary(
    view: Sequence[Message],
    count: Callable[[Message], int],
    keep_last: int = MASK_KEEP_LAST,
    keep_tokens: int = MASK_KEEP_TOKENS,
) -> tuple[int, int]:
    """Where the newest calls that stay whole begin in `view`, and how many calls that is:
    at most `keep_last`, and only while their result messages hold at most `keep_tokens`
    (the newest call always, if `keep_last`). A parallel batch is kept or not as a whole.
    Walks back from the end, so it costs what the kept calls cost, not the session."""
    boundary, kept, tokens = len(view), 0, 0
    sizes: dict[str, int] = {}
    for index in range(len(view) - 1, -1, -1):
        message = view[index]
        responses = message.tool_responses
        if responses:
            size = count(message)
            for response in responses:
                sizes[response.id] = size
                size = 0  # a message answering several calls counts once
            continue
        requests = message.tool_requests
        if message.role != "assistant" or not requests:
            continue
        size = sum(sizes.get(r.id, 0) for r in requests)
        fits = kept + len(requests) <= keep_last and tokens + size <= keep_tokens
        if not (fits or (kept == 0 and keep_last > 0)):
            break
        boundary, kept, tokens = index, kept + len(requests), tokens + size
    return boundary, kept


def plan_trim(
    view: Sequence[Message],
    count: Callable[[Message], int],
    preview: Callable[[Message], Message],
    *,
    keep_last: int = MASK_KEEP_LAST,
    keep_tokens: int = MASK_KEEP_TOKENS,
    lookback: int = 0,
    start: int = 0,
    can_fold: bool = True,
    view_tokens: int | None = None,
    anchor: int | None = None,
    unfoldable: Collection[str] = (),
) -> TrimPlan:
    """What a trim of `view` (the messages the model is shown now, masked ones as
    placeholders) would do: mask the calls older than the kept ones, fold the calls that
    were masked before. `count` gives a message's tokens, `preview` its masked form;
    `lookback` is how far before its breakpoints the provider looks for a cached prefix
    (Anthropic; 0: any shared prefix counts).

    `start`: the messages before it are settled (`TrimPlan.settled` of an earlier plan on
    the same view), so only the rest is looked at and a call costs what changed since.
    `can_fold`: the conversation ends with tool results, where a folding note can go (see
    `context_mgmt.folding`); otherwise masked calls wait. `view_tokens`: the view's tokens,
    when known, so a change that re-sends everything need not recount the settled part.
    `anchor`: the index of a message before `start` whose prefix the provider has cached
    (Anthropic: the request's cache anchor), so a change after it re-sends only what
    follows it. `unfoldable`: call ids a fold could not hide (see `fold_calls`); they stay
    placeholders."""
    boundary, _ = kept_boundary(view, count, keep_last, keep_tokens)
    region = view[start:boundary]
    old = {r.id for m in region for r in m.tool_requests}
    settled = _settled_until(view, start, boundary, can_fold, unfoldable)
    if not old:
        return TrimPlan(settled=settled)
    mask = set(messages_to_mask_among(region, old))
    foldable = old.difference(unfoldable)
    folded_messages = _foldable(region, foldable) if can_fold else set()
    fold = tuple(r.id for m in region if m.id in folded_messages for r in m.tool_requests)
    if not mask and not fold:
        return TrimPlan(settled=settled)
    sizes = {m.id: 0 for m in region if m.id in folded_messages}
    sizes.update({m.id: count(preview(m)) for m in region if m.id in mask})
    if fold:  # the new note replaces the one in view, wherever it is
        sizes.update({m.id: 0 for m in view[start:] if m.metadata.kind == TOOL_SUMMARY_KIND})
    added = FOLD_NOTE_TOKENS if fold else 0
    saved, resent = change_figures(
        view, sizes, count, lookback=lookback, added_tokens=added, start=start,
        view_tokens=view_tokens, anchor=anchor,
    )  # fmt: skip
    masked = tuple(m.id for m in region if m.id in mask)
    return TrimPlan(masked, fold, max(saved, 0), resent, settled=settled)


def _settled_until(
    view: Sequence[Message],
    start: int,
    boundary: int,
    folds: bool,
    unfoldable: Collection[str] = (),
) -> int:
    """The index of the first message from `start` that a trim could still change: an
    output worth masking, a call with a long argument, a placeholder waiting to be folded
    (with the call that asked for it) or the folding note (only if `folds`); the kept calls
    at the latest."""
    for index in range(start, boundary):
        message = view[index]
        if folds and message.metadata.kind == TOOL_SUMMARY_KIND:
            return index  # the next fold replaces it
        if message.tool_responses:
            waits = folds and not all(r.id in unfoldable for r in message.tool_responses)
            if (message.metadata.masked and waits) or (
                not message.metadata.masked and worth_masking(message)
            ):
                ask = index - 1
                return ask if ask >= start and view[ask].tool_requests else index
        elif not message.metadata.masked and has_long_arguments(message):
            return index
    return boundary


def change_figures(
    view: Sequence[Message],
    sizes: Mapping[str, int],
    count: Callable[[Message], int],
    *,
    lookback: int = 0,
    added_tokens: int = 0,
    replaced_tokens: int = 0,
    start: int = 0,
    view_tokens: int | None = None,
    anchor: int | None = None,
) -> tuple[int, int]:
    """`(saved_tokens, resent_tokens)` of a change to `view` that shows the messages named
    in `sizes` at that many tokens (0: hidden) and appends `added_tokens` in place of
    `replaced_tokens` already in the view. Only messages from `start` on are looked at;
    see `plan_trim` for `lookback`, `view_tokens` and `anchor`."""
    saved = replaced_tokens - added_tokens
    first: int | None = None
    after: list[int] = []
    before = 0
    for index in range(start, len(view)):
        message = view[index]
        size = count(message)
        before += size
        if message.id in sizes:
            first = index if first is None else first
            saved += size - sizes[message.id]
            size = sizes[message.id]
        after.append(size)
    if first is None:
        return 0, 0
    if lookback and len(view) - first > lookback:
        # Anthropic finds a cached prefix only this many blocks before a breakpoint: a
        # change further back than that re-sends the conversation from the request's
        # cache anchor on, or all of it without one.
        if anchor is not None and anchor < start:
            settled = sum(count(m) for m in view[anchor + 1 : start])
        elif view_tokens is not None:
            settled = view_tokens - before
        else:
            settled = sum(count(m) for m in view[:start])
        return saved, settled + sum(after) + added_tokens
    return saved, sum(after[first - start :]) + added_tokens


def _foldable(view: Sequence[Message], old: set[str]) -> set[str]:
    """Ids of the messages of old calls whose results are placeholders already: each
    tool-result message that is masked and answers only old calls, with the assistant
    messages whose every call it answers."""
    masked_calls: set[str] = set()
    messages: set[str] = set()
    for message in view:
        responses = message.tool_responses
        if message.metadata.masked and responses and all(r.id in old for r in responses):
            masked_calls.update(r.id for r in responses)
            messages.add(message.id)
    for message in view:
        requests = message.tool_requests
        if message.role == "assistant" and requests and all(r.id in masked_calls for r in requests):
            messages.add(message.id)
    # A result whose call's assistant message is not folded with it stays.
    folded_requests = {r.id for m in view if m.id in messages for r in m.tool_requests}
    return {
        m.id
        for m in view
        if m.id in messages and all(r.id in folded_requests for r in m.tool_responses)
    }


class TrimClock:
    """When to trim (see the module docstring): one per session, fed every model call."""

    def __init__(self, cache: PromptCache, patience: float = TRIM_PATIENCE) -> None:
        self.cache = cache
        self.patience = patience
        self.calls = 0
        """Model calls since the last trim (or since the session started here)."""
        self.waited = 0.0
        """Saved tokens times calls, summed over the calls since the last trim."""

    def restart(self) -> None:
        """The whole prompt changed anyway (a compaction, `/clear`): a new cycle starts."""
        self.calls = 0
        self.waited = 0.0

    def due(self, plan: TrimPlan) -> bool:
        """Count this call and say whether `plan` should be applied now."""
        self.calls += 1
        if plan.empty or plan.saved_tokens <= 0:
            return False
        self.waited += plan.saved_tokens
        # The trim's one-off cost as calls of keeping `saved_tokens`, times saved_tokens.
        calls = break_even_calls(self.cache, plan.resent_tokens, plan.saved_tokens)
        once = plan.paid_once / self.cache.read if self.cache.read > 0 else float("inf")
        miss = self.patience * (calls * plan.saved_tokens + once)
        # Trimming ends a cycle; the cheapest cycles per call end when keeping the output one
        # more call would cost more than the cycle's average so far, the trim included.
        if self.calls * plan.saved_tokens < self.waited + miss:
            return False
        self.restart()
        return True
