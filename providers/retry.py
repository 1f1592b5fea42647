"""Retries for transient provider failures: one policy, owned by gosling, not by the SDKs.

Retried: rate limits (429), overload (529 / `overloaded_error`), server errors (5xx) and
broken connections or streams. Never retried: misuse (4xx), authentication, context
overflow (the agent compacts instead). The wait doubles per attempt with jitter, and a
`retry-after` from the server wins when it says how long to wait.

A stream is retried only while nothing has reached the caller: once text was shown, a
retry would show it twice, so the error goes up and the caller decides (the agent loop
treats it as a failed turn).

Inside `sharing_backoff(backoff)` (a `gosling batch` worker), every attempt first waits out a
pause shared with the other workers, and every rate limit pauses them all: 429s back off
across the whole batch, not per worker.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import aclosing, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from gosling.providers.errors import ProviderError, RateLimited, ServerError

logger = logging.getLogger("gosling.providers")

T = TypeVar("T")

Sleep = Callable[[float], Awaitable[None]]
RetryHook = Callable[[ProviderError, int, float], None]


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry a failed model call."""

    max_retries: int = 3
    """Retries after the first attempt (0 disables retrying)."""
    initial_delay: float = 1.0
    """Seconds before the first retry; doubles for each further one."""
    max_delay: float = 30.0
    """Cap on the computed backoff."""
    max_retry_after: float = 120.0
    """Cap on a server-requested wait (`retry-after`)."""
    jitter: float = 0.25
    """Fraction of the backoff removed at random, so clients do not retry in lockstep."""
    sleep: Sleep = field(default=asyncio.sleep, compare=False)
    """Injected by tests so that nothing really waits."""
    rng: Callable[[], float] = field(default=random.random, compare=False)
    """Source of jitter in [0, 1); injectable for deterministic tests."""
    on_retry: RetryHook | None = field(default=None, compare=False)
    """Called with (error, attempt number, delay) before each wait, e.g. to tell the user."""

    def delay_for(self, error: ProviderError, attempt: int) -> float:
        """Seconds to wait before retry number `attempt` (0-based) after `error`."""
        retry_after = error.retry_after if isinstance(error, RateLimited) else None
        if retry_after is not None and retry_after >= 0:
            return min(float(retry_after), self.max_retry_after)
        backoff = min(self.max_delay, self.initial_delay * (2.0**attempt))
        return backoff * (1.0 - self.jitter * self.rng())


def is_retryable(error: ProviderError) -> bool:
    """Rate limits, overload and server-side failures are worth another try."""
    return isinstance(error, RateLimited | ServerError)


def parse_retry_after(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """Seconds a server asked us to wait: `retry-after-ms`, or `retry-after` as seconds or
    as an HTTP date. None when absent or unreadable."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


class SharedBackoff(Protocol):
    """A pause shared by several processes (the workers of one batch)."""

    async def wait(self) -> None:
        """Return once no pause is in force."""
        ...

    def pause(self, seconds: float) -> None:
        """Hold everyone sharing this off for `seconds` from now (a longer pause stands)."""
        ...


_shared_backoff: ContextVar[SharedBackoff | None] = ContextVar("shared_backoff", default=None)


@contextmanager
def sharing_backoff(backoff: SharedBackoff | None) -> Iterator[None]:
    """Model calls made inside (and in tasks started inside) honour and feed `backoff`."""
    token = _shared_backoff.set(backoff)
    try:
        yield
    finally:
        _shared_backoff.reset(token)


async def _wait_for_shared_pause() -> None:
    shared = _shared_backoff.get()
    if shared is not None:
        await shared.wait()


def _backoff_after(policy: RetryPolicy, error: ProviderError, attempt: int) -> float:
    """The wait before retry `attempt`; a rate limit also pauses everyone sharing a backoff,
    whether or not this call is retried."""
    delay = policy.delay_for(error, attempt)
    shared = _shared_backoff.get()
    if shared is not None and isinstance(error, RateLimited):
        shared.pause(delay)
    return delay


async def _wait_before_retry(
    policy: RetryPolicy, error: ProviderError, attempt: int, delay: float
) -> None:
    logger.warning(
        "%s; retrying in %.1fs (retry %d of %d)", error, delay, attempt + 1, policy.max_retries
    )
    if policy.on_retry is not None:
        policy.on_retry(error, attempt + 1, delay)
    await policy.sleep(delay)


async def call_with_retries(call: Callable[[], Awaitable[T]], policy: RetryPolicy) -> T:
    """Await `call()`, retrying retryable provider errors under `policy`."""
    attempt = 0
    while True:
        await _wait_for_shared_pause()
        try:
            return await call()
        except ProviderError as error:
            delay = _backoff_after(policy, error, attempt)
            if not is_retryable(error) or attempt >= policy.max_retries:
                raise
            await _wait_before_retry(policy, error, attempt, delay)
            attempt += 1


async def stream_with_retries(
    open_stream: Callable[[], AsyncGenerator[T, None]], policy: RetryPolicy
) -> AsyncIterator[T]:
    """Yield from a fresh `open_stream()`, retrying only while nothing has been yielded."""
    attempt = 0
    while True:
        yielded = False
        await _wait_for_shared_pause()
        try:
            async with aclosing(open_stream()) as events:
                async for event in events:
                    yielded = True
                    yield event
            return
        except ProviderError as error:
            delay = _backoff_after(policy, error, attempt)
            if yielded or not is_retryable(error) or attempt >= policy.max_retries:
                raise
            await _wait_before_retry(policy, error, attempt, delay)
            attempt += 1
