"""The JSON-RPC errors gosling answers a client with. Each message says what to do instead;
`data` carries the machine-readable part."""

from __future__ import annotations

from typing import Any

from acp import RequestError

INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AUTH_REQUIRED = -32000
NOT_FOUND = -32002
"""ACP's "resource not found"; clients treat it as such for sessions too."""


def not_initialized() -> RequestError:
    return RequestError(
        INVALID_REQUEST, "call initialize first: the connection has not been initialized"
    )


def unknown_session(session_id: str) -> RequestError:
    return RequestError(
        NOT_FOUND,
        f"no session {session_id!r} is open here; open it with session/load or "
        "session/resume (session/list shows the stored ones), or start one with session/new",
        {"sessionId": session_id},
    )


def unstored_session(session_id: str) -> RequestError:
    return RequestError(
        NOT_FOUND,
        f"no stored session {session_id!r}; session/list shows the stored ones",
        {"sessionId": session_id},
    )


def turn_running(session_id: str) -> RequestError:
    return RequestError(
        INVALID_REQUEST,
        f"session {session_id!r} is still answering a prompt; wait for its response or "
        "send session/cancel first",
        {"sessionId": session_id},
    )


def invalid_params(message: str, **data: Any) -> RequestError:
    return RequestError(INVALID_PARAMS, message, data or None)


def auth_required(message: str) -> RequestError:
    return RequestError(AUTH_REQUIRED, message)


def failed(message: str, **data: Any) -> RequestError:
    return RequestError(INTERNAL_ERROR, message, data or None)
