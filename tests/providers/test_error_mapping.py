"""Error bodies of every shape map to the taxonomy with a message a user can act on."""

from __future__ import annotations

from typing import Any

import pytest

from gosling.providers import (
    AuthenticationFailed,
    ContextLengthExceeded,
    ProviderError,
    RateLimited,
    RequestFailed,
    ServerError,
)
from gosling.providers.error_mapping import classify_error, error_fields


def anthropic_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (401, anthropic_body("authentication_error", "invalid x-api-key"), AuthenticationFailed),
        (403, anthropic_body("permission_error", "no access to model"), AuthenticationFailed),
        (429, anthropic_body("rate_limit_error", "slow down"), RateLimited),
        (529, anthropic_body("overloaded_error", "Overloaded"), RateLimited),
        (500, anthropic_body("api_error", "Internal server error"), ServerError),
        (500, "<html>Internal Server Error</html>", ServerError),
        (502, "<html>Bad Gateway</html>", ServerError),
        (499, "<html>Client Closed Request</html>", RequestFailed),
        (408, None, ServerError),
        (409, anthropic_body("conflict", "concurrent request"), ServerError),
        (
            400,
            anthropic_body("invalid_request_error", "messages: roles must alternate"),
            RequestFailed,
        ),
        (404, anthropic_body("not_found_error", "model: claude-nope"), RequestFailed),
        (422, {"detail": "unprocessable"}, RequestFailed),
        # errors inside a 200 stream (Anthropic `error` event; the SDK reports status 200)
        (200, anthropic_body("overloaded_error", "Overloaded"), RateLimited),
        (200, anthropic_body("api_error", "Internal server error"), ServerError),
        (200, anthropic_body("stream_interrupted", "upstream went away"), ServerError),
        (
            200,
            anthropic_body("invalid_request_error", "prompt is too long: 1 > 0"),
            ContextLengthExceeded,
        ),
        (None, {"error": {"code": "server_error", "message": "boom"}}, ServerError),
        (None, {"error": {"code": "rate_limit_exceeded", "message": "slow"}}, RateLimited),
        (None, {"error": {"code": "invalid_prompt", "message": "flagged"}}, RequestFailed),
    ],
)
def test_status_and_body_decide_the_class(
    status: int | None, body: Any, expected: type[ProviderError]
) -> None:
    assert type(classify_error(provider="p", status=status, body=body)) is expected


def test_message_carries_provider_status_type_and_the_servers_words() -> None:
    error = classify_error(
        provider="anthropic", status=429, body=anthropic_body("rate_limit_error", "slow down")
    )
    assert str(error) == "anthropic: 429 rate_limit_error: slow down"


def test_auth_failure_names_the_variable_to_fix() -> None:
    error = classify_error(provider="openai", status=401, body=None, auth_hint="set OPENAI_API_KEY")
    assert "set OPENAI_API_KEY" in str(error)


def test_rate_limit_keeps_the_servers_retry_after() -> None:
    error = classify_error(provider="p", status=429, body=None, headers={"Retry-After": "20"})
    assert isinstance(error, RateLimited) and error.retry_after == 20.0


def test_exhausted_quota_is_not_retried_as_a_rate_limit() -> None:
    body = {
        "message": "You exceeded your current quota.",
        "type": "insufficient_quota",
        "code": "insufficient_quota",
    }
    error = classify_error(provider="openai", status=429, body=body)
    assert type(error) is RequestFailed and "quota" in str(error)


def test_unknown_model_suggests_checking_name_and_url() -> None:
    error = classify_error(
        provider="ollama", status=404, body={"error": "model 'llama9' not found"}
    )
    assert "check the model name" in str(error)


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        (anthropic_body("api_error", "x"), ("api_error", None, "x")),
        ({"message": "m", "type": "t", "code": "c"}, ("t", "c", "m")),
        ({"error": "bare string"}, (None, None, "bare string")),
        ({"object": "error", "message": "flat", "code": 400}, (None, "400", "flat")),
        ("plain text", (None, None, "plain text")),
        (None, (None, None, None)),
    ],
)
def test_error_fields_read_every_body_shape(body: Any, fields: tuple[str | None, ...]) -> None:
    found = error_fields(body)
    assert (found.type, found.code, found.message) == fields


def test_an_error_inside_a_stream_names_its_type_not_a_status() -> None:
    for status in (None, 200):
        error = classify_error(
            provider="anthropic", status=status, body=anthropic_body("api_error", "boom")
        )
        assert isinstance(error, ServerError), status  # retried like a 5xx
        assert str(error) == "anthropic: api_error: boom", str(error)


def test_only_a_404_gets_the_model_name_and_base_url_hint() -> None:
    missing = classify_error(provider="openai", status=404, body={"error": {"message": "nope"}})
    assert "(check the model name and the base URL)" in str(missing)
    for status in (400, 402, 405, 413, 422):
        other = classify_error(provider="openai", status=status, body={"error": {"message": "x"}})
        assert isinstance(other, RequestFailed) and "check the model name" not in str(other)


def test_an_overflow_said_only_in_an_unusual_body_field_is_still_an_overflow() -> None:
    body = {
        "detail": "This model's maximum context length is 8192 tokens. However, you "
        "requested 9000 tokens"
    }
    error = classify_error(provider="openai-compatible", status=400, body=body)
    assert isinstance(error, ContextLengthExceeded)


def test_a_body_without_a_message_falls_back_to_what_the_sdk_said() -> None:
    error = classify_error(
        provider="openai", status=418, body="<html>teapot</html>", message="I'm a teapot"
    )
    assert str(error) == "openai: 418: <html>teapot</html>"
    said = classify_error(provider="openai", status=418, body=None, message="I'm a teapot")
    assert str(said) == "openai: 418: I'm a teapot"
    assert str(classify_error(provider="openai", status=418)) == "openai: 418: request failed"
