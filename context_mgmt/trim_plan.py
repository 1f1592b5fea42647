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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from context_mgmt.masking import MASK_KEEP_LAST, messages_to_mask_among
from context_mgmt.tool_pairs import TOOL_SUMMARY_KIND
from conversation import Message
from providers.cache_cost import break_even_calls
from providers.prompt_cache import PromptCache

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

    @property
    def empty(self) -> bool:
        return not (self.mask or self.fold)


def kept_calls(
    view: Sequence[Message],
    count: Callable[[Message], int],
    keep_last: int = MASK_KEEP_LAST,
    keep_tokens: int = MASK_KEEP_TOKENS,
) -> int:
    """How many of the newest calls stay whole: at most `keep_last`, and only while their
    result messages hold at most `keep_tokens` (the newest call always, if `keep_last`)."""
    results: dict[str, Message] = {}
    calls: list[str] = []
    for message in view:
        calls.extend(r.id for r in message.tool_requests)
        for response in message.tool_responses:
            results[response.id] = message
    kept, tokens = 0, 0
    counted: set[str] = set()
    for call in reversed(calls):
        if kept >= keep_last:
            break
        result = results.get(call)
        size = 0
        if result is not None and result.id not in counted:
            counted.add(result.id)
            size = count(result)
        if kept and tokens + size > keep_tokens:
            break
        kept += 1
        tokens += size
    return kept


def plan_trim(
    view: Sequence[Message],
    count: Callable[[Message], int],
    preview: Callable[[Message], Message],
    *,
    keep_last: int = MASK_KEEP_LAST,
    keep_tokens: int = MASK_KEEP_TOKENS,
    lookback: int = 0,
) -> TrimPlan:
    """What a trim of `view` (the messages the model is shown now, masked ones as
    placeholders) would do: mask the calls older than the kept ones, fold the calls that
    were masked before. `count` gives a message's tokens, `preview` its masked form;
    `lookback` is how far before its breakpoints the provider looks for a cached prefix
    (Anthropic; 0: any shared prefix counts)."""
    calls = [r.id for m in view for r in m.tool_requests]
    old = calls[: len(calls) - kept_calls(view, count, keep_last, keep_tokens)]
    if not old:
        return TrimPlan()
    old_set = set(old)
    mask = set(messages_to_mask_among(view, old_set))
    folded_messages = _foldable(view, old_set)
    fold = tuple(r.id for m in view if m.id in folded_messages for r in m.tool_requests)
    if not mask and not fold:
        return TrimPlan()
    sizes = {m.id: 0 for m in view if m.id in folded_messages}
    sizes.update({m.id: count(preview(m)) for m in view if m.id in mask})
    has_note = any(m.metadata.kind == TOOL_SUMMARY_KIND for m in view)
    added = FOLD_NOTE_TOKENS if fold else 0
    saved, resent = change_figures(
        view, sizes, count, lookback=lookback, added_tokens=added, replaced_tokens=0
    )
    if fold and has_note:
        saved += FOLD_NOTE_TOKENS  # the new note replaces the old one
    return TrimPlan(tuple(m.id for m in view if m.id in mask), fold, max(saved, 0), resent)


def change_figures(
    view: Sequence[Message],
    sizes: Mapping[str, int],
    count: Callable[[Message], int],
    *,
    lookback: int = 0,
    added_tokens: int = 0,
    replaced_tokens: int = 0,
) -> tuple[int, int]:
    """`(saved_tokens, resent_tokens)` of a change to `view` that shows the messages named
    in `sizes` at that many tokens (0: hidden) and appends `added_tokens` in place of
    `replaced_tokens` already in the view. See `plan_trim` for `lookback`."""
    saved = replaced_tokens - added_tokens
    first: int | None = None
    after: list[int] = []
    for index, message in enumerate(view):
        size = count(message)
        if message.id in sizes:
            first = index if first is None else first
            saved += size - sizes[message.id]
            size = sizes[message.id]
        after.append(size)
    if first is None:
        return 0, 0
    if lookback and len(view) - first > lookback:
        # Anthropic finds a cached prefix only this many blocks before a breakpoint: a
        # change further back than that re-sends the whole conversation.
        first = 0
    return saved, sum(after[first:]) + added_tokens


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
