"""The retry policy: what is retried, how long it waits, and when it gives up."""

from __future__ import annotations

import email.utils
from collections.abc import AsyncGenerator, Awaitable, Callable

import pytest

from gosling.providers import (
    AuthenticationFailed,
    ContextLengthExceeded,
    ProviderError,
    RateLimited,
    RequestFailed,
    RetryPolicy,
    ServerError,
)
from gosling.providers.retry import call_with_retries, parse_retry_after, stream_with_retries
from tests.fakes.fixtures import SleepRecorder


def test_retry_after_in_seconds_milliseconds_and_http_date() -> None:
    assert parse_retry_after({"Retry-After": "12"}) == 12.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    now = 1_800_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=now) == pytest.approx(30.0)
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "-3"}) == 0.0


def test_server_requested_wait_wins_and_is_capped() -> None:
    policy = RetryPolicy(max_retry_after=60.0)
    assert policy.delay_for(RateLimited("slow down", retry_after=5), 2) == 5.0
    assert policy.delay_for(RateLimited("slow down", retry_after=3600), 0) == 60.0


def test_backoff_doubles_up_to_the_cap_and_jitter_only_shortens() -> None:
    exact = RetryPolicy(initial_delay=1.0, max_delay=5.0, rng=lambda: 0.0)
    assert [exact.delay_for(ServerError("x"), n) for n in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    jittered = RetryPolicy(initial_delay=4.0, jitter=0.5, rng=lambda: 1.0)
    assert jittered.delay_for(ServerError("x"), 0) == 2.0


def _failing(
    errors: list[ProviderError], result: str = "ok"
) -> tuple[list[int], Callable[[], Awaitable[str]]]:
    calls: list[int] = []

    async def call() -> str:
        calls.append(1)
        if errors:
            raise errors.pop(0)
        return result

    return calls, call


@pytest.mark.parametrize(
    "error",
    [RateLimited("429"), ServerError("503"), RateLimited("overloaded", status=529)],
    ids=["rate-limited", "server-error", "overloaded"],
)
async def test_transient_errors_are_retried(error: ProviderError) -> None:
    sleeps = SleepRecorder()
    calls, call = _failing([error, error])
    assert await call_with_retries(call, RetryPolicy(sleep=sleeps, rng=lambda: 0.0)) == "ok"
    assert len(calls) == 3
    assert sleeps.delays == [1.0, 2.0]


@pytest.mark.parametrize(
    "error",
    [RequestFailed("400"), AuthenticationFailed("401"), ContextLengthExceeded("too long")],
    ids=["misuse", "auth", "overflow"],
)
async def test_permanent_errors_are_raised_at_once(error: ProviderError) -> None:
    sleeps = SleepRecorder()
    calls, call = _failing([error])
    with pytest.raises(type(error)):
        await call_with_retries(call, RetryPolicy(sleep=sleeps))
    assert len(calls) == 1 and sleeps.delays == []


async def test_gives_up_after_max_retries_and_reports_each_retry() -> None:
    seen: list[tuple[int, float]] = []
    policy = RetryPolicy(
        max_retries=2,
        sleep=SleepRecorder(),
        rng=lambda: 0.0,
        on_retry=lambda error, attempt, delay: seen.append((attempt, delay)),
    )
    calls, call = _failing([ServerError("a"), ServerError("b"), ServerError("c")])
    with pytest.raises(ServerError, match="c"):
        await call_with_retries(call, policy)
    assert len(calls) == 3
    assert seen == [(1, 1.0), (2, 2.0)]


async def test_stream_is_not_retried_once_something_was_yielded() -> None:
    opened: list[int] = []

    async def partial() -> AsyncGenerator[str, None]:
        opened.append(1)
        yield "Hel"
        raise ServerError("dropped")

    got: list[str] = []
    with pytest.raises(ServerError):
        async for piece in stream_with_retries(partial, RetryPolicy(sleep=SleepRecorder())):
            got.append(piece)
    assert got == ["Hel"] and len(opened) == 1


async def test_stream_failing_before_its_first_event_is_retried() -> None:
    attempts: list[int] = []

    async def flaky() -> AsyncGenerator[str, None]:
        attempts.append(1)
        if len(attempts) == 1:
            raise RateLimited("busy", retry_after=0.5)
        yield "Hello"

    sleeps = SleepRecorder()
    got = [p async for p in stream_with_retries(flaky, RetryPolicy(sleep=sleeps))]
    assert got == ["Hello"] and sleeps.delays == [0.5]


async def test_zero_retries_disables_retrying() -> None:
    calls, call = _failing([ServerError("once")])
    with pytest.raises(ServerError):
        await call_with_retries(call, RetryPolicy(max_retries=0, sleep=SleepRecorder()))
    assert len(calls) == 1


def test_a_server_asking_for_ten_minutes_is_waited_two_at_most_by_default() -> None:
    policy = RetryPolicy()
    asked = RateLimited("slow down", provider="anthropic", status=429, retry_after=600.0)
    assert policy.delay_for(asked, 0) == 120.0
    soon = RateLimited("slow down", provider="anthropic", status=429, retry_after=119.5)
    assert policy.delay_for(soon, 0) == 119.5


def test_a_zero_or_negative_retry_after_ms_means_retry_now() -> None:
    assert parse_retry_after({"retry-after-ms": "0"}) == 0.0
    assert parse_retry_after({"retry-after-ms": "-250"}) == 0.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25


def test_a_retry_after_of_zero_retries_at_once_and_a_negative_one_is_ignored() -> None:
    policy = RetryPolicy(initial_delay=1.0, jitter=0.0)
    now = RateLimited("slow down", provider="openai", status=429, retry_after=0.0)
    assert policy.delay_for(now, 0) == 0.0
    odd = RateLimited("slow down", provider="openai", status=429, retry_after=-5.0)
    assert policy.delay_for(odd, 0) == 1.0  # the normal backoff


def test_the_default_backoff_stops_growing_at_thirty_seconds() -> None:
    policy = RetryPolicy(jitter=0.0)
    failure = ServerError("500: boom", provider="openai", status=500)
    assert [policy.delay_for(failure, n) for n in range(7)] == [1, 2, 4, 8, 16, 30, 30]


def test_an_unreadable_retry_after_ms_falls_back_to_retry_after() -> None:
    assert parse_retry_after({"retry-after-ms": "soon", "retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "soon"}) is None


def test_a_retry_after_date_in_the_past_means_retry_now() -> None:
    now = 1_800_000_000.0
    past = email.utils.formatdate(now - 30, usegmt=True)
    assert parse_retry_after({"retry-after": past}, now=now) == 0.0
