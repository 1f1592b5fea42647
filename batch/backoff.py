"""The batch-wide backoff: when one worker hits a rate limit, every worker holds off.

Workers install one with `providers.retry.sharing_backoff`. On one machine the pause is a
number in shared memory (`LocalBackoff`); on Ray it lives in one small actor
(`RayBackoff` over `BackoffClock`), so workers on every node see the same pause.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from multiprocessing.sharedctypes import Synchronized
from typing import Any

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


class LocalBackoff:
    """A pause in shared memory: `until` is a `time.monotonic()` instant (system-wide on
    the platforms gosling runs on), shared by the processes that inherited it."""

    def __init__(
        self,
        until: Synchronized[float],
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._until = until
        self._clock = clock
        self._sleep = sleep

    def remaining(self) -> float:
        return max(0.0, self._until.value - self._clock())

    async def wait(self) -> None:
        while (left := self.remaining()) > 0:
            await self._sleep(left)

    def pause(self, seconds: float) -> None:
        with self._until.get_lock():
            self._until.value = max(self._until.value, self._clock() + seconds)


class BackoffClock:
    """The state of a Ray-wide pause; run as a Ray actor (see `RayBackoff`)."""

    def __init__(self, *, clock: Clock = time.monotonic) -> None:
        self._until = 0.0
        self._clock = clock

    def pause(self, seconds: float) -> None:
        self._until = max(self._until, self._clock() + seconds)

    def remaining(self) -> float:
        return max(0.0, self._until - self._clock())


class RayBackoff:
    """Asks the `BackoffClock` actor; durations, not instants, cross machines, so nodes
    whose clocks disagree still agree on how long to wait."""

    def __init__(self, actor: Any, *, sleep: Sleep = asyncio.sleep) -> None:
        self._actor = actor
        self._sleep = sleep

    async def wait(self) -> None:
        while (left := float(await self._actor.remaining.remote())) > 0:
            await self._sleep(left)

    def pause(self, seconds: float) -> None:
        self._actor.pause.remote(seconds)

    def __reduce__(self) -> tuple[Any, ...]:
        return (RayBackoff, (self._actor,))
