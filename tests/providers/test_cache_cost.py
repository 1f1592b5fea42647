"""The cost model prices requests as the providers bill them (figures computed by hand)."""

from __future__ import annotations

import pytest

from gosling.providers.cache_cost import (
    CacheSimulator,
    Request,
    Segment,
    break_even_calls,
    price_requests,
    total_cost,
)
from gosling.providers.prompt_cache import ANTHROPIC_CACHE, NO_CACHE, OPENAI_CACHE, PromptCache


def seg(key: str, tokens: int, breakpoint: bool = False) -> Segment:
    return Segment(key, tokens, breakpoint)


def blocks(keys: str, tokens: int = 256) -> list[Segment]:
    return [seg(k, tokens) for k in keys]


# -- OpenAI: longest shared prefix, 128-token blocks, from 1,024 tokens -------------------------


@pytest.mark.parametrize("k", [4, 5, 7, 9])
def test_openai_a_prefix_change_at_message_k_reprices_exactly_the_suffix(k: int) -> None:
    first = blocks("abcdefghij")  # 10 x 256 = 2,560 tokens
    changed = [*first[:k], seg("X", 256), *first[k + 1 :], seg("k", 256)]
    costs = price_requests([first, [*first, seg("k", 256)], changed], OPENAI_CACHE)

    assert [c.sent for c in costs] == [2560, 2816, 2816]
    assert costs[1].cache_read == 2560 and costs[1].input_cost == pytest.approx(256 + 256.0)
    # the third request shares the k segments before the change and nothing after it
    assert costs[2].cache_read == 256 * k
    assert costs[2].uncached == 2816 - 256 * k
    assert costs[2].input_cost == pytest.approx(2816 - 256 * k + 0.1 * 256 * k)


def test_openai_caches_nothing_below_1024_tokens() -> None:
    short = blocks("abc", 300)  # 900 tokens
    assert [c.cache_read for c in price_requests([short, short], OPENAI_CACHE)] == [0, 0]
    # 1,100 tokens, sent twice: the repeat reads 1,024 (8 whole blocks of 128)
    longer = [*short, seg("d", 200)]
    assert [c.cache_read for c in price_requests([longer, longer], OPENAI_CACHE)] == [0, 1024]


def test_openai_a_shared_prefix_under_1024_tokens_is_not_read() -> None:
    first = blocks("abcdef", 200)  # 1,200 tokens, cached
    second = [*first[:4], seg("X", 800)]  # shares 800 tokens only
    assert price_requests([first, second], OPENAI_CACHE)[1].cache_read == 0


def test_openai_reads_whole_128_token_blocks_and_writes_for_free() -> None:
    first = [seg("a", 1000), seg("b", 200)]
    second = [*first, seg("c", 500)]
    costs = price_requests([first, second], OPENAI_CACHE)
    assert costs[1].cache_read == 1152  # 1,200 shared, rounded down to 9 blocks
    assert costs[1].cache_write == 0
    assert costs[1].input_cost == pytest.approx(1700 - 1152 + 115.2)


# -- Anthropic: breakpoints ---------------------------------------------------------------------


def test_anthropic_writes_up_to_the_last_breakpoint_and_reads_it_next_time() -> None:
    first = [seg("S", 2000, True), seg("U1", 500, True), seg("A1", 300), seg("U2", 400, True)]
    second = [
        seg("S", 2000, True),
        seg("U1", 500),
        seg("A1", 300),
        seg("U2", 400, True),
        seg("A2", 300),
        seg("U3", 400, True),
    ]
    costs = price_requests([first, second], ANTHROPIC_CACHE)

    assert (costs[0].cache_read, costs[0].cache_write, costs[0].uncached) == (0, 3200, 0)
    assert costs[0].input_cost == pytest.approx(3200 * 1.25)
    assert (costs[1].cache_read, costs[1].cache_write, costs[1].uncached) == (3200, 700, 0)
    assert costs[1].input_cost == pytest.approx(320 + 875)


def test_anthropic_tokens_after_the_last_breakpoint_are_new_input() -> None:
    request = [seg("S", 2000, True), seg("U1", 500, True), seg("A1", 300)]
    cost = price_requests([request], ANTHROPIC_CACHE)[0]
    assert (cost.cache_write, cost.uncached) == (2500, 300)
    assert cost.input_cost == pytest.approx(2500 * 1.25 + 300)


def test_anthropic_a_change_at_message_k_reprices_from_the_last_cached_breakpoint() -> None:
    history = [seg("S", 2000, True), seg("U1", 500), seg("A1", 300), seg("U2", 400, True)]
    changed = [seg("S", 2000, True), seg("U1*", 500), seg("A1", 300), seg("U2", 400)]
    changed += [seg("A2", 300), seg("U3", 400, True)]
    costs = price_requests([history, changed], ANTHROPIC_CACHE)
    # Only the system prompt's prefix survives a change to message 1: everything after it
    # is written again.
    assert costs[1].cache_read == 2000
    assert costs[1].cache_write == 500 + 300 + 400 + 300 + 400


def test_anthropic_finds_a_cached_prefix_only_within_20_segments_of_a_breakpoint() -> None:
    head = [seg("S", 2000, True), *[seg(f"m{i}", 100) for i in range(30)]]
    head[-1] = seg("m29", 100, True)  # cached prefix ends at segment 30

    def later(extra: int) -> list[Segment]:
        tail = [seg(f"n{i}", 100) for i in range(extra)]
        tail[-1] = seg(f"n{extra - 1}", 100, True)
        return [seg("S", 2000, True), *[seg(f"m{i}", 100) for i in range(30)], *tail]

    near = price_requests([head, later(15)], ANTHROPIC_CACHE)[1]
    far = price_requests([head, later(25)], ANTHROPIC_CACHE)[1]
    assert near.cache_read == 2000 + 3000
    assert far.cache_read == 2000  # only the system prompt's own breakpoint hits


def test_anthropic_does_not_cache_a_prefix_below_the_minimum() -> None:
    request = [seg("S", 500, True), seg("U", 400, True)]
    costs = price_requests([request, request], ANTHROPIC_CACHE)
    assert [(c.cache_read, c.cache_write) for c in costs] == [(0, 0), (0, 0)]
    assert costs[1].input_cost == 900
    bigger = ANTHROPIC_CACHE.model_copy(update={"min_tokens": 4096})
    request = [seg("S", 3000, True), seg("U", 2000, True)]
    assert price_requests([request], bigger)[0].cache_write == 5000


# -- totals and other mechanisms -----------------------------------------------------------------


def test_no_cache_prices_every_token_as_new_input_and_output_by_its_ratio() -> None:
    simulator = CacheSimulator(NO_CACHE.model_copy(update={"output": 4.0}))
    request = Request((seg("a", 2000), seg("b", 2000)), output_tokens=50)
    assert simulator.price(request).cost == 4000 + 200
    assert simulator.price(request).cost == 4000 + 200


def test_totals_sum_the_requests_and_keep_the_peak() -> None:
    cache = PromptCache(mechanism="prefix", read=0.5, write=0.0, block_tokens=128)
    costs = price_requests([blocks("abcd"), blocks("abcde"), blocks("ab")], cache)
    totals = total_cost(costs)
    assert (totals.calls, totals.sent, totals.peak) == (3, 1024 + 1280 + 512, 1280)
    assert totals.cache_read == 1024
    assert totals.cost == pytest.approx(1024 + 256 + 512 + 0.5 * 1024)
    assert totals.cached_share == pytest.approx(1024 / 2816)


def test_break_even_weighs_the_resent_suffix_against_the_reads_saved() -> None:
    # Anthropic: 30,000 tokens re-written at 1.25 instead of read at 0.1 (34,500 extra)
    # against 25,000 fewer tokens read on each later call (2,500 a call): 13.8 calls.
    assert break_even_calls(ANTHROPIC_CACHE, 30_000, 25_000) == pytest.approx(13.8)
    # OpenAI writes are free: the suffix costs 1.0 instead of 0.1 once.
    assert break_even_calls(OPENAI_CACHE, 30_000, 25_000) == pytest.approx(10.8)
    assert break_even_calls(NO_CACHE, 30_000, 25_000) == 0.0
    assert break_even_calls(ANTHROPIC_CACHE, 30_000, 0) == float("inf")


def test_break_even_agrees_with_the_simulator() -> None:
    # 30 outputs of 1,000 tokens; hiding the first 10 (to 10 tokens each) resends the rest.
    keep = [seg("S", 2000, True), *[seg(f"o{i}", 1000) for i in range(30)]]
    hide = [seg("S", 2000, True), *[seg(f"h{i}", 10) for i in range(10)], *keep[11:]]
    calls = round(break_even_calls(OPENAI_CACHE, 20 * 1000 + 10 * 10, 10 * 990)) + 2
    kept = total_cost(price_requests([keep] * (calls + 1), OPENAI_CACHE)).cost
    hidden = total_cost(price_requests([keep, *[hide] * calls], OPENAI_CACHE)).cost
    assert hidden < kept
    short = calls - 4
    kept = total_cost(price_requests([keep] * (short + 1), OPENAI_CACHE)).cost
    hidden = total_cost(price_requests([keep, *[hide] * short], OPENAI_CACHE)).cost
    assert hidden > kept
