"""Error replies of the fake server: each server's real overflow body, API-shaped errors for
the other faults, and the error a server sends inside a 200 stream."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakes.script import Fault
from tests.fakes.wire import Api, Frame

_OVERFLOW_FILE = Path(__file__).with_name("overflow_bodies.json")
OVERFLOW_BODIES: dict[str, tuple[int, Any]] = {
    flavor: (entry["status"], entry["body"])
    for flavor, entry in json.loads(_OVERFLOW_FILE.read_text(encoding="utf-8")).items()
}
"""Each server's real overflow reply (sources in providers/overflow.py)."""

_DEFAULT_OVERFLOW: dict[Api, str] = {
    "anthropic": "anthropic",
    "chat": "openai",
    "responses": "openai_responses",
}


def _anthropic_error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_fake"}


def _openai_error(kind: str, message: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def error_response(api: Api, fault: Fault) -> tuple[int, dict[str, str], Any]:
    """(status, headers, body) for a fault answered before any streaming starts."""
    headers = dict(fault.headers)
    if fault.retry_after is not None:
        headers["retry-after"] = fault.retry_after
    anthropic = api == "anthropic"
    kind = fault.kind
    if kind == "status":
        return fault.status or 500, headers, fault.body
    if kind == "auth":
        body = (
            _anthropic_error("authentication_error", "invalid x-api-key")
            if anthropic
            else _openai_error(
                "invalid_request_error", "Incorrect API key provided: test-key.", "invalid_api_key"
            )
        )
        return 401, headers, body
    if kind == "rate_limit":
        body = (
            _anthropic_error(
                "rate_limit_error",
                "This request would exceed the rate limit for your organization.",
            )
            if anthropic
            else _openai_error(
                "requests",
                "Rate limit reached for requests per min (RPM). Please try again in 1s.",
                "rate_limit_exceeded",
            )
        )
        return 429, headers, body
    if kind == "overloaded":
        body = (
            _anthropic_error("overloaded_error", "Overloaded")
            if anthropic
            else _openai_error(
                "server_error", "The engine is currently overloaded, please try again later.", None
            )
        )
        return 529, headers, body
    if kind == "context_overflow":
        flavor = fault.flavor or _DEFAULT_OVERFLOW[api]
        if flavor not in OVERFLOW_BODIES:
            raise ValueError(
                f"unknown overflow flavor {flavor!r}; known: {', '.join(OVERFLOW_BODIES)}"
            )
        status, body = OVERFLOW_BODIES[flavor]
        return status, headers, body
    # server_error, and stream-only faults when the request was not streamed
    status = fault.status or 500
    body = (
        _anthropic_error("api_error", fault.message or "Internal server error")
        if anthropic
        else _openai_error(
            "server_error",
            fault.message or "The server had an error while processing your request.",
            None,
        )
    )
    return status, headers, body


def stream_error_frame(api: Api, fault: Fault, sequence_number: int) -> Frame:
    """The error a server sends inside a 200 stream."""
    kind = fault.error_type or ("overloaded_error" if api == "anthropic" else "server_error")
    message = fault.message or (
        "Overloaded" if kind == "overloaded_error" else "The server had an error."
    )
    if api == "anthropic":
        return "error", json.dumps({"type": "error", "error": {"type": kind, "message": message}})
    if api == "chat":
        return None, json.dumps(
            {"error": {"message": message, "type": kind, "param": None, "code": None}}
        )
    if kind == "context_length_exceeded":
        # As seen from the Responses API in anomalyco/opencode#8089.
        payload = dict(OVERFLOW_BODIES["openai_responses"][1]["error"])
        return "error", json.dumps(
            {"type": "error", "sequence_number": sequence_number, "error": payload}
        )
    response = {
        "id": "resp_failed",
        "object": "response",
        "status": "failed",
        "output": [],
        "error": {"code": kind, "message": message},
    }
    return "response.failed", json.dumps(
        {"type": "response.failed", "sequence_number": sequence_number, "response": response}
    )
