"""What every SDK-backed adapter shares: client lifecycle, the test-safety guard on base
URLs, gosling's retry policy (the SDKs' own retries are off) and exception translation.

An adapter implements four things: `_sdk()` (its lazily imported SDK module),
`_build_client()`, `_stream_attempt(...)` and `_complete_attempt(...)`. One attempt is one
HTTP request; retries and error mapping wrap it here.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import os
import threading
from abc import abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any, NoReturn, Protocol
from urllib.parse import urlsplit

from gosling.conversation import Message
from gosling.providers.base import Completed, ModelConfig, Provider, StreamEvent, ToolSpec, Usage
from gosling.providers.deadlines import CallDeadlines, Deadline
from gosling.providers.error_mapping import translate_exception
from gosling.providers.errors import ProviderConfigError
from gosling.providers.retry import RetryPolicy, call_with_retries, stream_with_retries

OPENAI_REASONING_PREFIX = "openai-reasoning:"
"""Marks a ThinkingContent signature that holds an OpenAI Responses reasoning item (its id
and encrypted content). Only the Responses adapter sends such thinking back; Anthropic's
signatures never carry the prefix, so neither provider is sent the other's reasoning."""

DEFAULT_TIMEOUT = 600.0
DEFAULT_CONNECT_TIMEOUT = 10.0


def is_loopback_url(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def ensure_base_url_allowed(url: str, *, provider: str) -> None:
    """Under GOSLING_TESTING=1 only loopback endpoints may be used: a test that forgot to
    point a provider at the fake server fails here instead of calling a real API."""
    if os.environ.get("GOSLING_TESTING") == "1" and not is_loopback_url(url):
        raise ProviderConfigError(
            f"refusing to call {url} while GOSLING_TESTING=1; point the provider at the "
            "loopback fake server (tests/fakes) with base_url=...",
            provider=provider,
        )


def shared_tls_context() -> Any:
    """One verified TLS context per process, shared by every SDK client. Building one reads
    the CA bundle (tens of milliseconds, far more on a loaded machine), and a `gosling batch`
    worker builds a client for every task. A CA bundle that cannot be loaded is the user's
    setting to fix, named. `warm_tls_context` builds it in a thread ahead of need."""
    warming = _tls_warming[0]
    if warming is not None:
        warming.join()
    with _tls_lock:
        if "context" not in _tls:
            _tls["context"] = _build_tls_context()
        return _tls["context"]


def _build_tls_context() -> Any:
    import ssl

    import httpx2

    try:
        return httpx2.create_ssl_context()
    except (OSError, ssl.SSLError) as exc:
        where = [f"{var}={os.environ[var]}" for var in _CA_VARS if os.environ.get(var)]
        source = ", ".join(where) or "the default CA bundle"
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ProviderConfigError(
            f"cannot load the TLS certificates from {source} ({reason}); point "
            f"{' or '.join(_CA_VARS)} at a readable PEM bundle or directory, or unset them"
        ) from exc


_tls_lock = threading.Lock()
_tls: dict[str, Any] = {}
_tls_warming: list[threading.Thread | None] = [None]


def warm_tls_context() -> None:
    """Start loading the CA bundle in a thread (OpenSSL releases the GIL while it reads and
    parses it), so the first request finds the context ready. A failure is left for
    `shared_tls_context` to raise again where it can be reported."""

    def build() -> None:
        with contextlib.suppress(ProviderConfigError), _tls_lock:
            if "context" not in _tls:
                _tls["context"] = _build_tls_context()

    with _tls_lock:
        if _tls_warming[0] is not None or "context" in _tls:
            return
        thread = threading.Thread(target=build, name="tls-warm-up", daemon=True)
        _tls_warming[0] = thread
        thread.start()


def tls_context_for(base_url: str) -> Any:
    """What `verify` an HTTP client for `base_url` gets: the shared verified context for
    https; for plain http (a local server) a verifying context without the CA bundle, which
    costs nothing to build and still refuses any https connection it cannot verify."""
    if urlsplit(base_url).scheme.lower() != "http":
        return shared_tls_context()
    import ssl

    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


_CA_VARS = ("SSL_CERT_FILE", "SSL_CERT_DIR")
"""The variables that choose where verified connections find their CA certificates."""


def parse_tool_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Tool arguments from their JSON text; an empty text means no arguments. Returns the
    arguments and, when the text was not a JSON object, an error for the ToolRequest."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"tool arguments were not valid JSON ({exc.msg}): {raw[:200]}"
    if isinstance(value, dict):
        return value, None
    return {"value": value}, None


def as_dict(value: Any) -> dict[str, Any]:
    """An SDK model (or a plain mapping) as a plain dict, as the server sent it."""
    if isinstance(value, Mapping):
        return dict(value)
    to_dict = getattr(value, "to_dict", None)
    if to_dict is not None:
        result: dict[str, Any] = to_dict()
        return result
    raise TypeError(f"cannot read {type(value).__name__} as a dict")


class StreamAssembler(Protocol):
    """Builds gosling's stream events from one API's raw stream events."""

    def feed(self, event: Mapping[str, Any], /) -> list[StreamEvent]: ...

    def finish(self) -> list[StreamEvent]: ...


class SdkProvider(Provider):
    """Base of the adapters that speak to a server through an official SDK."""

    def __init__(
        self,
        model_config: ModelConfig,
        *,
        api_key: str,
        base_url: str,
        name: str,
        retry: RetryPolicy | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        default_headers: Mapping[str, str] | None = None,
        auth_hint: str | None = None,
        extra_overflow_patterns: Iterable[str] = (),
        deadlines: CallDeadlines | None = None,
    ) -> None:
        super().__init__(model_config)
        self.deadlines = deadlines or CallDeadlines()
        self.name = name
        self.api_key = api_key
        self.base_url = base_url
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.default_headers = dict(default_headers or {})
        self.auth_hint = auth_hint
        self.extra_overflow_patterns = tuple(extra_overflow_patterns)
        self._client_cache: tuple[asyncio.AbstractEventLoop, Any] | None = None
        if urlsplit(base_url).scheme.lower() == "https":
            warm_tls_context()  # ready by the first request, loaded beside the start-up work

    def __repr__(self) -> str:
        model = self.model_config.model
        return f"{type(self).__name__}({self.name!r}, model={model!r}, base_url={self.base_url!r})"

    # -- for adapters -------------------------------------------------------------------------

    @abstractmethod
    def _sdk(self) -> ModuleType:
        """The SDK module (imported here, lazily, never at package import)."""

    @abstractmethod
    def _build_client(self) -> Any:
        """A new async SDK client with `max_retries=0`."""

    @abstractmethod
    def request_params(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec], model: str
    ) -> dict[str, Any]:
        """The keyword arguments of the SDK's `create` for this conversation."""

    @abstractmethod
    def _endpoint(self) -> Any:
        """The SDK resource whose `create` sends the request (`client().messages`, ...)."""

    @abstractmethod
    def _assembler(self) -> StreamAssembler:
        """A fresh assembler that turns raw stream events into gosling's events."""

    @abstractmethod
    def _completed(self, reply: dict[str, Any]) -> Completed:
        """The `Completed` event of a non-streamed reply."""

    def _stream_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """Extra keyword arguments for streamed requests only (none by default)."""
        return params

    async def _stream_attempt(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec], model: str
    ) -> AsyncGenerator[StreamEvent, None]:
        """One streamed request, ending with `Completed`."""
        params = self._stream_params(self.request_params(system, messages, tools, model))
        request = self._endpoint().create(**params, stream=True, timeout=self.httpx_timeout())
        deadline = Deadline(self.deadlines, provider=self.name)
        stream = await deadline.first_byte(request)
        assembler = self._assembler()
        async with stream:
            async for raw in deadline.iterate(aiter(stream)):
                for event in assembler.feed(as_dict(raw)):
                    yield event
        for event in assembler.finish():
            yield event

    async def _complete_attempt(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec], model: str
    ) -> Completed:
        """One non-streamed request."""
        params = self.request_params(system, messages, tools, model)
        request = self._endpoint().create(**params, timeout=self.httpx_timeout())
        reply = await Deadline(self.deadlines, provider=self.name).whole(request)
        return self._completed(as_dict(reply))

    def model_for(self, fast: bool) -> str:
        if fast and self.model_config.fast_model:
            return self.model_config.fast_model
        return self.model_config.model

    def client(self) -> Any:
        """The SDK client of the running event loop (clients hold loop-bound connections)."""
        loop = asyncio.get_running_loop()
        if self._client_cache is None or self._client_cache[0] is not loop:
            ensure_base_url_allowed(self.base_url, provider=self.name)
            self._client_cache = (loop, self._build_client())
        return self._client_cache[1]

    def httpx_timeout(self) -> Any:
        import httpx2

        return httpx2.Timeout(self.timeout, connect=self.connect_timeout)

    # -- the Provider interface ---------------------------------------------------------------

    async def stream(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> AsyncIterator[StreamEvent]:
        model = self.model_for(fast)

        def attempt() -> AsyncGenerator[StreamEvent, None]:
            return self._translated_stream(system, messages, tools, model)

        async for event in stream_with_retries(attempt, self.retry):
            yield event

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> tuple[Message, Usage]:
        model = self.model_for(fast)

        async def attempt() -> Completed:
            try:
                return await self._complete_attempt(system, messages, tools, model)
            except Exception as exc:
                self._reraise(exc)

        done = await call_with_retries(attempt, self.retry)
        return done.message, done.usage

    async def aclose(self) -> None:
        """Close the HTTP client of the current loop, if any."""
        if self._client_cache is not None:
            _, client = self._client_cache
            self._client_cache = None
            await client.close()

    # -- internals ----------------------------------------------------------------------------

    async def _translated_stream(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec], model: str
    ) -> AsyncGenerator[StreamEvent, None]:
        try:
            async for event in self._stream_attempt(system, messages, tools, model):
                yield event
        except Exception as exc:
            self._reraise(exc)

    def _reraise(self, exc: Exception) -> NoReturn:
        """Raise the gosling error for `exc` (or `exc` itself when it is not an API or
        transport failure, so that bugs surface unchanged)."""
        error = translate_exception(
            exc,
            sdk=self._sdk(),
            provider=self.name,
            extra_overflow_patterns=self.extra_overflow_patterns,
            auth_hint=self.auth_hint,
            base_url=self.base_url,
        )
        if error is None or error is exc:
            raise exc
        raise error from exc


class OpenAISdkProvider(SdkProvider):
    """An adapter on the `openai` SDK (Chat Completions, Responses, compatible servers)."""

    def _sdk(self) -> ModuleType:
        import openai

        return openai

    def _build_client(self) -> Any:
        import openai

        return openai.AsyncOpenAI(
            api_key=self.api_key,
            base_url=self.base_url,
            max_retries=0,
            timeout=self.httpx_timeout(),
            default_headers=self.default_headers or None,
            http_client=openai.DefaultAsyncHttpxClient(verify=tls_context_for(self.base_url)),
        )
