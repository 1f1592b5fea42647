"""What a sequence of model requests costs once prompt caching is priced in.

A request is a list of `Segment`s (the system prompt with the tools, then one per message):
its token count, a key that changes whenever its content does, and whether the provider is
told to cache the prefix ending there (a breakpoint). `CacheSimulator` walks the requests
in order, keeps what the provider would have cached, and prices each request by
`providers.prompt_cache.PromptCache` in units of one new input token. Changing segment k
breaks every cached prefix that runs past it, so the tokens from k on are paid again.

Simplifications, on purpose: a segment is cached or not as a whole (a provider may reuse
part of a message that only grew at its end); entries never expire (every call lands within
the 5-minute TTL); OpenAI's best-effort routing always finds the cache. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gosling.providers.prompt_cache import PromptCache


@dataclass(frozen=True)
class Segment:
    """One cacheable piece of a request, in order."""

    key: str
    """Equal keys mean equal content (a hash of the message as sent)."""
    tokens: int
    breakpoint: bool = False
    """The provider is asked to cache the prefix that ends with this segment."""


@dataclass(frozen=True)
class Request:
    """One model call: its input segments and, when known, the tokens of its reply."""

    segments: tuple[Segment, ...]
    output_tokens: int = 0

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.segments)


@dataclass(frozen=True)
class RequestCost:
    """One request priced. Costs are in units of one new input token."""

    sent: int
    cache_read: int
    cache_write: int
    output: int
    input_cost: float
    output_cost: float

    @property
    def uncached(self) -> int:
        """Input tokens neither read from nor written to the cache."""
        return self.sent - self.cache_read - self.cache_write

    @property
    def cost(self) -> float:
        return self.input_cost + self.output_cost


@dataclass(frozen=True)
class CostTotals(RequestCost):
    """A run of requests priced: the sums, the number of calls and the largest request."""

    calls: int
    peak: int

    @property
    def cached_share(self) -> float:
        return self.cache_read / self.sent if self.sent else 0.0


def _prefix_ids(segments: Sequence[Segment]) -> tuple[list[int], list[int]]:
    """For each segment, an id of the prefix ending with it, and that prefix's tokens."""
    ids: list[int] = []
    cumulative: list[int] = []
    previous, total = 0, 0
    for segment in segments:
        previous = hash((previous, segment.key))
        total += segment.tokens
        ids.append(previous)
        cumulative.append(total)
    return ids, cumulative


class CacheSimulator:
    """The provider's prompt cache over one session: feed it every request, in order."""

    def __init__(self, cache: PromptCache) -> None:
        self.cache = cache
        self._cached: set[int] = set()

    def price(self, request: Request | Sequence[Segment]) -> RequestCost:
        """Price `request` against what earlier requests cached, then cache what it writes."""
        if not isinstance(request, Request):
            request = Request(tuple(request))
        ids, cumulative = _prefix_ids(request.segments)
        sent = cumulative[-1] if cumulative else 0
        if self.cache.mechanism == "breakpoints":
            read, write = self._breakpoints(request.segments, ids, cumulative)
        elif self.cache.mechanism == "prefix":
            read, write = self._prefix(ids, cumulative), 0
        else:
            read, write = 0, 0
        uncached = sent - read - write
        return RequestCost(
            sent=sent,
            cache_read=read,
            cache_write=write,
            output=request.output_tokens,
            input_cost=uncached + read * self.cache.read + write * self.cache.write,
            output_cost=request.output_tokens * self.cache.output,
        )

    def _breakpoints(
        self, segments: Sequence[Segment], ids: list[int], cumulative: list[int]
    ) -> tuple[int, int]:
        """Anthropic: read the longest cached prefix found at or up to `lookback` segments
        before a breakpoint; write from there to the last breakpoint long enough to cache."""
        breakpoints = [i for i, s in enumerate(segments) if s.breakpoint]
        read = 0
        for b in breakpoints:
            for j in range(b, max(b - self.cache.lookback, 0) - 1, -1):
                if ids[j] in self._cached:
                    read = max(read, cumulative[j])
                    break
        cacheable = [b for b in breakpoints if cumulative[b] >= self.cache.min_tokens]
        written_to = max((cumulative[b] for b in cacheable), default=0)
        self._cached.update(ids[b] for b in cacheable)
        return read, max(written_to - read, 0)

    def _prefix(self, ids: list[int], cumulative: list[int]) -> int:
        """OpenAI: the longest prefix shared with an earlier prompt of at least `min_tokens`,
        rounded down to whole blocks; nothing below `min_tokens`."""
        if not cumulative or cumulative[-1] < self.cache.min_tokens:
            return 0
        shared = 0
        for prefix_id, tokens in zip(ids, cumulative, strict=True):
            if prefix_id not in self._cached:
                break
            shared = tokens
        self._cached.update(ids)
        if shared < self.cache.min_tokens:
            return 0
        return shared // self.cache.block_tokens * self.cache.block_tokens


def price_requests(
    requests: Iterable[Request | Sequence[Segment]], cache: PromptCache
) -> list[RequestCost]:
    """Every request of one session priced in order, from an empty cache."""
    simulator = CacheSimulator(cache)
    return [simulator.price(request) for request in requests]


def total_cost(costs: Iterable[RequestCost]) -> CostTotals:
    """The sums over `costs` (and the largest request)."""
    items = list(costs)
    return CostTotals(
        calls=len(items),
        sent=sum(c.sent for c in items),
        cache_read=sum(c.cache_read for c in items),
        cache_write=sum(c.cache_write for c in items),
        output=sum(c.output for c in items),
        input_cost=sum(c.input_cost for c in items),
        output_cost=sum(c.output_cost for c in items),
        peak=max((c.sent for c in items), default=0),
    )


def break_even_calls(cache: PromptCache, resent_tokens: int, saved_tokens: int) -> float:
    """How many later calls a change to the prompt must serve to pay for itself.

    Changing a message (masking an output, folding placeholders, placing a summary) makes
    the `resent_tokens` after it cost a new input or a cache write once instead of a read,
    and saves `saved_tokens` on every later call, each of which would have been a read. It
    pays when the coming calls outnumber the result (`inf` when nothing is saved); the
    decision rule of issue 16 item 3, in the spirit of Anthropic's `clear_at_least`.
    """
    if cache.mechanism == "none":
        return 0.0 if saved_tokens > 0 else float("inf")
    first_call = cache.write if cache.mechanism == "breakpoints" else 1.0
    miss = resent_tokens * max(first_call - cache.read, 0.0)
    per_call = saved_tokens * cache.read
    return miss / per_call if per_call > 0 else float("inf")
