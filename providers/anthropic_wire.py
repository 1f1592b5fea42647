"""The Anthropic Messages API over `httpx2` directly, without importing the `anthropic` SDK.

Importing the SDK loads about 3,500 modules (every type of every beta API): 1.3 s on a fast
machine, most of a headless run's time to its first request. The one call gosling makes,
`POST /v1/messages` (streamed or not), needs none of it: a JSON body out, JSON or
server-sent events back. `AnthropicWire` is shaped like the slice of `AsyncAnthropic` the
adapter uses (`client.messages.create(...)`, `close()`), and behaves like it where the
adapter can tell: no retries of its own, `ping` events skipped, an `error` event raised as
a status error carrying its body, the error body of a refused request kept whole, the
failure to connect told apart from a connection that broke later.

Errors are `WireStatusError`, `WireConnectionError` and `WireTimeout`;
`error_mapping.translate_exception` maps them like the SDK's own.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Any

API_VERSION = "2023-06-01"
"""The `anthropic-version` header the SDK sends."""


class WireError(Exception):
    """A failed call on the direct HTTP path."""


class WireStatusError(WireError):
    """The server refused the request (an HTTP error), or a stream carried an error event
    (`status` is then the stream's own, 200)."""

    def __init__(
        self, message: str, *, status: int, body: object, headers: Mapping[str, str]
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.body = body
        self.headers = dict(headers)


class WireConnectionError(WireError):
    """No response at all: the server could not be reached (or hung up before answering)."""


class WireTimeout(WireError):
    """The HTTP client's own timeout passed before the response started."""


class _Messages:
    def __init__(self, wire: AnthropicWire) -> None:
        self._wire = wire

    async def create(
        self,
        *,
        stream: bool = False,
        timeout: Any = None,  # noqa: ASYNC109 - httpx2's timeout, as the SDK takes it
        extra_headers: Mapping[str, str] | None = None,
        **params: Any,
    ) -> Any:
        """`messages.create`: a dict for a whole reply, an `EventStream` when streamed."""
        body = {**params, "stream": True} if stream else params
        response = await self._wire.send(body, timeout=timeout, extra_headers=extra_headers)
        if not stream:
            try:
                raw = await response.aread()
            finally:
                await response.aclose()
            reply: dict[str, Any] = json.loads(raw)
            return reply
        return EventStream(response)


class AnthropicWire:
    """The part of `anthropic.AsyncAnthropic` gosling uses, on one `httpx2.AsyncClient`."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str,
        timeout: Any,
        default_headers: Mapping[str, str] | None = None,
        verify: Any = True,
    ) -> None:
        import httpx2

        self._httpx = httpx2
        self._url = base_url.rstrip("/") + "/v1/messages"
        self._headers = {
            "x-api-key": api_key,
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
            "accept": "application/json",
            **(default_headers or {}),
        }
        self._http = httpx2.AsyncClient(timeout=timeout, verify=verify)
        self.messages = _Messages(self)

    async def send(
        self,
        body: Mapping[str, Any],
        *,
        timeout: Any,  # noqa: ASYNC109 - httpx2's timeout, as the SDK takes it
        extra_headers: Mapping[str, str] | None,
    ) -> Any:
        """POST `body`; the response once its headers are in, or a `WireError`."""
        httpx2 = self._httpx
        headers = {**self._headers, **(extra_headers or {})}
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        request = self._http.build_request(
            "POST", self._url, content=content, headers=headers, timeout=timeout
        )
        try:
            response = await self._http.send(request, stream=True)
        except httpx2.TimeoutException as exc:
            raise WireTimeout(str(exc)) from exc
        except httpx2.TransportError as exc:
            raise WireConnectionError(str(exc) or type(exc).__name__) from exc
        if response.status_code >= 400:
            try:
                raw = await response.aread()
            finally:
                await response.aclose()
            error_body: object = raw.decode(errors="replace")
            with contextlib.suppress(ValueError):
                error_body = json.loads(raw)
            raise WireStatusError(
                f"Error code: {response.status_code} - {error_body}",
                status=response.status_code,
                body=error_body,
                headers=response.headers,
            )
        return response

    async def close(self) -> None:
        await self._http.aclose()


class EventStream:
    """The events of a streamed reply, each the JSON object of one `data:` field."""

    def __init__(self, response: Any) -> None:
        self._response = response

    async def __aenter__(self) -> EventStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._response.aclose()

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._events()

    async def _events(self) -> AsyncIterator[dict[str, Any]]:
        async for event, data in _server_sent_events(self._response.aiter_lines()):
            if event in (None, "ping"):
                continue
            if event == "error":
                body: object = data
                with contextlib.suppress(ValueError):
                    body = json.loads(data)
                raise WireStatusError(
                    f"{body}" if body else f"Error code: {self._response.status_code}",
                    status=self._response.status_code,
                    body=body,
                    headers=self._response.headers,
                )
            if data:
                parsed: dict[str, Any] = json.loads(data)
                yield parsed


async def _server_sent_events(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str | None, str]]:
    """(event name, data) of each event in an SSE stream; comments (keep-alives) skipped."""
    event: str | None = None
    data: list[str] = []
    async for line in lines:
        if not line:
            if event is not None or data:
                yield event, "\n".join(data)
            event, data = None, []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    if event is not None or data:
        yield event, "\n".join(data)
