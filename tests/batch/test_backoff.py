"""429s back off across the whole batch: one worker's rate limit pauses every worker's next
model call, across processes."""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from collections.abc import AsyncGenerator, Callable
from multiprocessing.sharedctypes import Synchronized
from typing import Any

import pytest

from gosling.batch.backoff import BackoffClock, LocalBackoff, RayBackoff
from gosling.providers import RateLimited, RetryPolicy, ServerError
from gosling.providers.retry import call_with_retries, sharing_backoff, stream_with_retries
from tests.fakes.fixtures import SleepRecorder


class FakeClock:
    def __init__(self) -> None:
        self.now = time.monotonic()
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        assert len(self.slept) < 100, f"the pause never ends: slept {self.slept[:5]}..."
        self.now += seconds


def _rate_limited_elsewhere(until: Synchronized[float]) -> None:
    LocalBackoff(until).pause(30.0)


async def test_a_pause_set_in_one_process_holds_back_another() -> None:
    ctx = multiprocessing.get_context("spawn")
    until: Synchronized[float] = ctx.Value("d", 0.0)
    other = ctx.Process(target=_rate_limited_elsewhere, args=(until,))
    other.start()
    other.join(60)
    fake = FakeClock()
    here = LocalBackoff(until, clock=fake.clock, sleep=fake.sleep)

    await here.wait()

    assert len(fake.slept) == 1 and 20.0 < fake.slept[0] <= 30.0
    await here.wait()
    assert len(fake.slept) == 1  # the pause is over


class _Method:
    """An actor method as `RayBackoff` calls it: `.remote()` runs it (in call order, as an
    actor does) and gives an awaitable of its result, awaited or not."""

    def __init__(self, method: Callable[..., Any]) -> None:
        self._method = method

    def remote(self, *args: Any) -> asyncio.Future[Any]:
        reply: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        reply.set_result(self._method(*args))
        return reply


class _InProcessActor:
    """The `BackoffClock` actor without Ray: the same object, its methods called in turn."""

    def __init__(self, clock: BackoffClock) -> None:
        self.pause = _Method(clock.pause)
        self.remaining = _Method(clock.remaining)


async def test_a_ray_wide_pause_holds_back_the_next_call_until_it_is_over() -> None:
    fake = FakeClock()
    clock = BackoffClock(clock=fake.clock)
    worker = RayBackoff(_InProcessActor(clock), sleep=fake.sleep)

    await worker.wait()
    assert fake.slept == [] and clock.remaining() == 0.0  # no pause yet: nothing waits

    worker.pause(12.0)
    await worker.wait()
    assert fake.slept == [12.0]
    await worker.wait()
    assert fake.slept == [12.0] and clock.remaining() == 0.0  # the pause is over


async def test_a_rate_limit_pauses_everyone_and_every_call_waits_for_the_pause() -> None:
    until: Synchronized[float] = multiprocessing.get_context("spawn").Value("d", 0.0)
    limited, other = FakeClock(), FakeClock()
    other.now = limited.now
    replies: list[object] = [RateLimited("slow down", retry_after=12), "ok"]

    async def call() -> object:
        reply = replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    shared = LocalBackoff(until, clock=limited.clock, sleep=limited.sleep)
    with sharing_backoff(shared):
        assert (
            await call_with_retries(call, RetryPolicy(max_retries=1, sleep=limited.sleep)) == "ok"
        )
    assert limited.slept == [12.0]  # its own retry-after, once

    async def stream() -> AsyncGenerator[str, None]:
        yield "event"

    # Another worker's next call, a stream that never failed, waits the pause out first.
    with sharing_backoff(LocalBackoff(until, clock=other.clock, sleep=other.sleep)):
        events = [e async for e in stream_with_retries(stream, RetryPolicy(sleep=other.sleep))]
    assert events == ["event"] and other.slept == [12.0]


async def test_without_a_shared_backoff_nothing_waits_beyond_the_policy() -> None:
    sleeps = SleepRecorder()
    replies: list[object] = [RateLimited("slow down", retry_after=3), "ok"]

    async def call() -> object:
        reply = replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    assert await call_with_retries(call, RetryPolicy(max_retries=1, sleep=sleeps)) == "ok"
    assert sleeps.delays == [3.0]


async def test_a_server_error_is_retried_without_pausing_the_other_workers() -> None:
    """Only a rate limit is about the account; one worker's 500 must not stall the batch."""
    until: Synchronized[float] = multiprocessing.get_context("spawn").Value("d", 0.0)
    failing, other = FakeClock(), FakeClock()
    other.now = failing.now
    replies: list[object] = [ServerError("500: boom", status=500), "ok"]

    async def call() -> object:
        reply = replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    shared = LocalBackoff(until, clock=failing.clock, sleep=failing.sleep)
    policy = RetryPolicy(max_retries=1, sleep=failing.sleep, jitter=0.0)
    with sharing_backoff(shared):
        assert await call_with_retries(call, policy) == "ok"
    assert failing.slept == [1.0]  # its own backoff
    assert LocalBackoff(until, clock=other.clock, sleep=other.sleep).remaining() == 0.0


async def test_the_last_fraction_of_a_second_of_a_pause_is_waited_out_too() -> None:
    """A worker that comes to its next call 0.4 s before the pause ends still waits those
    0.4 s, on one machine and on Ray: calling early would meet the rate limit again."""
    local, ray = FakeClock(), FakeClock()
    until: Synchronized[float] = multiprocessing.get_context("spawn").Value("d", 0.0)
    LocalBackoff(until, clock=local.clock).pause(0.4)
    clock = BackoffClock(clock=ray.clock)
    clock.pause(0.4)

    await LocalBackoff(until, clock=local.clock, sleep=local.sleep).wait()
    await RayBackoff(_InProcessActor(clock), sleep=ray.sleep).wait()

    assert local.slept == [pytest.approx(0.4)] and ray.slept == [pytest.approx(0.4)]
