"""Deadlines of one model call, enforced by gosling rather than by the HTTP library.

The HTTP read timeout restarts with every byte, so a server that trickles keep-alive pings
keeps a call open forever. `CallDeadlines` bounds the wait for the response to start and the
whole attempt; passing either ends the attempt with `TimedOut`, which is retried like any
other server failure.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TypeVar

from gosling.providers.errors import TimedOut

T = TypeVar("T")

DEFAULT_REQUEST_TIMEOUT = 600.0
DEFAULT_FIRST_BYTE_TIMEOUT = 120.0


@dataclass(frozen=True)
class CallDeadlines:
    request: float = DEFAULT_REQUEST_TIMEOUT
    """Seconds one attempt may take from sending the request to the end of the reply."""
    first_byte: float = DEFAULT_FIRST_BYTE_TIMEOUT
    """Seconds to wait for the response to start (its status and headers)."""


_REQUEST_OVERRIDE: ContextVar[tuple[float, str] | None] = ContextVar(
    "gosling_request_deadline", default=None
)


@contextmanager
def request_deadline(seconds: float, *, setting: str) -> Iterator[None]:
    """Calls made inside this block (by this task) get `seconds` as their whole-attempt
    deadline instead of `request_timeout`; `setting` is what a timeout message names. The
    compaction summarizer uses it: its deadline scales with the size of its input."""
    token = _REQUEST_OVERRIDE.set((seconds, setting))
    try:
        yield
    finally:
        _REQUEST_OVERRIDE.reset(token)


class Deadline:
    """The running clock of one attempt."""

    def __init__(self, deadlines: CallDeadlines, *, provider: str) -> None:
        override = _REQUEST_OVERRIDE.get()
        self._request_setting = "request_timeout"
        if override is not None:
            deadlines = replace(deadlines, request=override[0])
            self._request_setting = override[1]
        self._deadlines = deadlines
        self._provider = provider
        self._loop = asyncio.get_running_loop()
        self._end = self._loop.time() + deadlines.request

    def _expired(self, first_byte: bool) -> TimedOut:
        if first_byte:
            seconds, setting = self._deadlines.first_byte, "first_byte_timeout"
            what = "the server sent no response"
        else:
            seconds, setting = self._deadlines.request, self._request_setting
            what = "the reply did not complete"
        return TimedOut(
            f"{what} within {min(seconds, self._deadlines.request):g} s ({setting} in config)",
            provider=self._provider,
        )

    async def first_byte(self, awaitable: Awaitable[T]) -> T:
        """Await the response's start, within the first-byte and the overall deadline."""
        end = min(self._end, self._loop.time() + self._deadlines.first_byte)
        try:
            async with asyncio.timeout_at(end):
                return await awaitable
        except TimeoutError:
            raise self._expired(first_byte=end < self._end) from None

    async def whole(self, awaitable: Awaitable[T]) -> T:
        """Await a complete reply within the overall deadline."""
        try:
            async with asyncio.timeout_at(self._end):
                return await awaitable
        except TimeoutError:
            raise self._expired(first_byte=False) from None

    async def iterate(self, items: AsyncIterator[T]) -> AsyncIterator[T]:
        """The items of a stream, each awaited within the overall deadline (never across a
        `yield`, so the consumer's own work is not cancelled)."""
        while True:
            try:
                async with asyncio.timeout_at(self._end):
                    item = await anext(items)
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise self._expired(first_byte=False) from None
            yield item
