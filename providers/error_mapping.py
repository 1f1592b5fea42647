"""SDK exceptions and error payloads become the gosling error taxonomy here.

Both official SDKs are generated from the same template, so one mapping serves both: the
adapter passes its SDK module, and nothing outside `providers/` ever sees an SDK exception.
Error bodies differ by server (Anthropic nests `{"error": {"type", "message"}}`, OpenAI
`{"error": {"message", "type", "code"}}`, vLLM answers flat, LM Studio with a bare string),
so the fields are read defensively.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from gosling.providers.errors import (
    AuthenticationFailed,
    ContextLengthExceeded,
    ProviderError,
    RateLimited,
    RequestFailed,
    ServerError,
)
from gosling.providers.overflow import is_context_overflow
from gosling.providers.retry import parse_retry_after

_SERVER_TYPES = frozenset({"api_error", "server_error", "internal_server_error", "timeout_error"})
_RATE_TYPES = frozenset({"rate_limit_error", "rate_limit_exceeded"})


@dataclass(frozen=True)
class ErrorFields:
    """What an error body says, whatever its shape."""

    type: str | None
    code: str | None
    message: str | None


def error_fields(body: object) -> ErrorFields:
    """Read type, code and message from any of the error body shapes servers send."""
    inner: object = body
    if isinstance(body, Mapping) and "error" in body:
        inner = body["error"]
    if isinstance(inner, str):
        return ErrorFields(None, None, inner)
    if not isinstance(inner, Mapping):
        return ErrorFields(None, None, None)
    code = inner.get("code")
    message = inner.get("message")
    kind = inner.get("type")
    return ErrorFields(
        type=str(kind) if kind is not None else None,
        code=str(code) if code is not None else None,
        message=str(message) if message is not None else None,
    )


def _body_text(body: object) -> str | None:
    if body is None:
        return None
    if isinstance(body, str):
        return body
    try:
        return json.dumps(body, default=str)
    except (TypeError, ValueError):
        return str(body)


def classify_error(
    *,
    provider: str,
    status: int | None,
    body: object = None,
    message: str | None = None,
    headers: Mapping[str, str] | None = None,
    extra_overflow_patterns: Iterable[str] = (),
    auth_hint: str | None = None,
) -> ProviderError:
    """Map one failed call (an HTTP error, or an error event inside a stream when `status`
    is None or 200) to the taxonomy."""
    fields = error_fields(body)
    said = fields.message or message or "request failed"
    label = [str(status)] if status and status != 200 else []
    if fields.type or fields.code:
        label.append(str(fields.type or fields.code))
    text = f"{' '.join(label)}: {said}" if label else said
    kinds = {fields.type, fields.code}

    if status in (401, 403) or kinds & {
        "authentication_error",
        "permission_error",
        "invalid_api_key",
    }:
        hint = f" ({auth_hint})" if auth_hint else ""
        return AuthenticationFailed(text + hint, provider=provider, status=status)
    if "insufficient_quota" in kinds:
        return RequestFailed(text + " (billing quota exhausted)", provider=provider, status=status)
    if status == 429 or kinds & _RATE_TYPES:
        return RateLimited(
            text, provider=provider, status=status, retry_after=parse_retry_after(headers)
        )
    if status == 529 or "overloaded_error" in kinds:
        return RateLimited(
            text, provider=provider, status=status, retry_after=parse_retry_after(headers)
        )
    if is_context_overflow(
        fields.message,
        message,
        _body_text(body),
        codes=(fields.type, fields.code),
        extra_patterns=extra_overflow_patterns,
    ):
        return ContextLengthExceeded(text, provider=provider, status=status)
    if status is None or status == 200:
        if fields.type == "invalid_request_error" or (fields.code or "").startswith("invalid"):
            return RequestFailed(text, provider=provider, status=status)
        return ServerError(text, provider=provider, status=status)
    if status >= 500 or status in (408, 409) or kinds & _SERVER_TYPES:
        return ServerError(text, provider=provider, status=status)
    if status == 404:
        text += " (check the model name and the base URL)"
    return RequestFailed(text, provider=provider, status=status)


def translate_exception(
    exc: BaseException,
    *,
    sdk: ModuleType,
    provider: str,
    extra_overflow_patterns: Iterable[str] = (),
    auth_hint: str | None = None,
    base_url: str | None = None,
) -> ProviderError | None:
    """The gosling error for an exception raised by an SDK call or its stream; None when
    the exception is not a transport or API failure (a bug should surface as itself).
    Connection failures and timeouts name `base_url`, the first thing to check."""
    where = f" {base_url}" if base_url else ""
    import httpx2

    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, sdk.APIStatusError):
        response: Any = exc.response
        return classify_error(
            provider=provider,
            status=exc.status_code,
            body=exc.body,
            message=exc.message,
            headers=dict(response.headers) if response is not None else None,
            extra_overflow_patterns=extra_overflow_patterns,
            auth_hint=auth_hint,
        )
    if isinstance(exc, sdk.APITimeoutError):
        return ServerError(f"the request to{where} timed out", provider=provider)
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f" ({cause})" if cause else ""
        return ServerError(
            f"cannot connect to{where or ' the server'}{detail}; check that the server is "
            "running and the base URL (--base-url, or the provider's *_BASE_URL variable)",
            provider=provider,
        )
    if isinstance(exc, sdk.APIError):
        return classify_error(
            provider=provider,
            status=None,
            body=exc.body,
            message=exc.message,
            extra_overflow_patterns=extra_overflow_patterns,
            auth_hint=auth_hint,
        )
    if isinstance(exc, httpx2.TimeoutException):
        return ServerError(f"the request to{where} timed out", provider=provider)
    if isinstance(exc, httpx2.TransportError | httpx2.StreamError):
        return ServerError(f"the connection broke: {exc}", provider=provider)
    if isinstance(exc, json.JSONDecodeError):
        return ServerError(f"malformed response from the server: {exc}", provider=provider)
    return None
