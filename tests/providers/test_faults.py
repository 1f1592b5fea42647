"""Every fault the fake server can inject ends in the right error class or a successful
retry, through each real SDK. Sleeps are recorded, never waited."""

from __future__ import annotations

import email.utils
import time

import pytest

from gosling.conversation import Message
from gosling.providers import (
    AuthenticationFailed,
    Completed,
    ContextLengthExceeded,
    RateLimited,
    RequestFailed,
    RetryPolicy,
    ServerError,
    StreamEvent,
    TextDelta,
)
from gosling.providers.base import TRUNCATED_STOP_REASONS
from tests.fakes.fixtures import SleepRecorder
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.script import Fault, Turn
from tests.providers.conftest import API_PROVIDERS, MakeProvider, provider_for

HELLO = [Message.user("hello")]
OK = Turn(text="Recovered fine.")


async def stream_all(make: MakeProvider, name: str, **kwargs: object) -> list[StreamEvent]:
    provider = make(name, **kwargs)
    return [event async for event in provider.stream("", HELLO)]


def final_text(events: list[StreamEvent]) -> str:
    last = events[-1]
    assert isinstance(last, Completed)
    return last.message.text


@pytest.mark.parametrize("name", API_PROVIDERS)
async def test_rate_limit_is_retried_after_the_servers_retry_after(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer, sleeps: SleepRecorder
) -> None:
    fake_llm.add(Fault.rate_limit(retry_after="7"), OK)
    events = await stream_all(make_provider, name)
    assert final_text(events) == "Recovered fine."
    assert sleeps.delays == [7.0]
    assert len(fake_llm.model_requests()) == 2


async def test_retry_after_as_an_http_date(
    make_provider: MakeProvider, fake_llm: FakeLLMServer, sleeps: SleepRecorder
) -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    fake_llm.add(Fault.rate_limit(retry_after=when), OK)
    await make_provider("openai").complete("", HELLO)
    assert 25.0 <= sleeps.delays[0] <= 30.0


@pytest.mark.parametrize("name", API_PROVIDERS)
@pytest.mark.parametrize(
    "fault",
    [Fault.overloaded(), Fault.server_error(500), Fault.server_error(503)],
    ids=["529-overloaded", "500", "503"],
)
async def test_overload_and_server_errors_are_retried_with_backoff(
    name: str,
    fault: Fault,
    make_provider: MakeProvider,
    fake_llm: FakeLLMServer,
    sleeps: SleepRecorder,
) -> None:
    fake_llm.add(fault, fault, OK)
    provider = make_provider(name)
    message, _ = await provider.complete("", HELLO)
    assert message.text == "Recovered fine."
    assert sleeps.delays == [1.0, 2.0]  # exponential, jitter disabled in this policy


async def test_backoff_jitter_only_shortens_the_wait(fake_llm: FakeLLMServer) -> None:
    recorder = SleepRecorder()
    policy = RetryPolicy(sleep=recorder, rng=lambda: 0.999, initial_delay=2.0)
    fake_llm.add(Fault.server_error(), OK)
    await provider_for("openai", fake_llm, retry=policy).complete("", HELLO)
    assert 1.5 <= recorder.delays[0] < 2.0


@pytest.mark.parametrize("name", API_PROVIDERS)
async def test_retries_are_bounded(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer, sleeps: SleepRecorder
) -> None:
    fake_llm.add(*[Fault.overloaded()] * 4)
    with pytest.raises(RateLimited):
        await stream_all(make_provider, name)
    assert len(fake_llm.model_requests()) == 4  # first try + 3 retries
    assert len(sleeps.delays) == 3


@pytest.mark.parametrize("name", API_PROVIDERS)
async def test_bad_key_fails_at_once_and_says_which_variable(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer, sleeps: SleepRecorder
) -> None:
    fake_llm.add(Fault.auth())
    with pytest.raises(AuthenticationFailed) as failure:
        await stream_all(make_provider, name)
    assert failure.value.status == 401
    if name != "ollama":
        assert ("ANTHROPIC_API_KEY" if name == "anthropic" else "OPENAI_API_KEY") in str(
            failure.value
        )
    assert sleeps.delays == []


@pytest.mark.parametrize("name", API_PROVIDERS)
async def test_client_misuse_is_not_retried(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer, sleeps: SleepRecorder
) -> None:
    body = {"error": {"type": "invalid_request_error", "message": "tools.0.name: invalid"}}
    fake_llm.add(Fault.http_status(400, body))
    with pytest.raises(RequestFailed, match=r"tools\.0\.name: invalid"):
        await stream_all(make_provider, name)
    assert sleeps.delays == []
    assert len(fake_llm.model_requests()) == 1


@pytest.mark.parametrize("name", API_PROVIDERS)
async def test_connection_dropped_before_any_output_is_retried(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(Turn(text="never seen", fault=Fault.drop(after_events=1)), OK)
    events = await stream_all(make_provider, name)
    assert final_text(events) == "Recovered fine."
    assert "never seen" not in "".join(e.text for e in events if isinstance(e, TextDelta))


@pytest.mark.parametrize("name", API_PROVIDERS)
async def test_connection_dropped_after_output_raises_instead_of_repeating_it(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(Turn(text="Partial answer then silence", fault=Fault.drop()), OK)
    provider = make_provider(name)
    seen: list[StreamEvent] = []
    with pytest.raises(ServerError):
        async for event in provider.stream("", HELLO):
            seen.append(event)
    assert any(isinstance(e, TextDelta) for e in seen)
    assert len(fake_llm.model_requests()) == 1
    assert fake_llm.pending == 1


@pytest.mark.parametrize("name", API_PROVIDERS)
async def test_dropped_non_streamed_request_is_retried(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(Fault.drop(), OK)
    message, _ = await make_provider(name).complete("", HELLO)
    assert message.text == "Recovered fine."


@pytest.mark.parametrize("name", API_PROVIDERS)
async def test_malformed_json_is_a_server_error_and_retried(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(
        Turn(text="x", fault=Fault.malformed(after_events=1)),  # streamed, before output
        OK,
        Fault.malformed(),  # non-streamed body
        OK,
    )
    provider = make_provider(name)
    assert final_text([e async for e in provider.stream("", HELLO)]) == "Recovered fine."
    message, _ = await provider.complete("", HELLO)
    assert message.text == "Recovered fine."


@pytest.mark.parametrize("name", API_PROVIDERS)
async def test_malformed_json_after_output_raises_server_error(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(Turn(text="Some words before garbage", fault=Fault.malformed()))
    with pytest.raises(ServerError, match="malformed"):
        await stream_all(make_provider, name)


@pytest.mark.parametrize("name", API_PROVIDERS)
async def test_slow_first_byte_within_the_timeout_is_fine(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(Turn(text="Slow but sure.", delay=0.2))
    assert final_text(await stream_all(make_provider, name)) == "Slow but sure."


async def test_first_byte_slower_than_the_timeout_is_retried(
    make_provider: MakeProvider, fake_llm: FakeLLMServer, sleeps: SleepRecorder
) -> None:
    fake_llm.add(Turn(text="too late", delay=1.0), OK)
    events = await stream_all(make_provider, "anthropic", timeout=0.2)
    assert final_text(events) == "Recovered fine."
    assert len(sleeps.delays) == 1


async def test_anthropic_error_event_before_output_is_retried(
    make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(Turn(text="unseen", fault=Fault.stream_error(after_events=1)), OK)
    assert final_text(await stream_all(make_provider, "anthropic")) == "Recovered fine."


@pytest.mark.parametrize("name", API_PROVIDERS)
async def test_overloaded_error_mid_stream_after_output_raises_rate_limited(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    # Anthropic sends `event: error` on the 200 stream (the SDK raises a status-200 error);
    # Chat servers send an {"error": ...} chunk; Responses sends response.failed.
    error_type = (
        "overloaded_error" if name in ("anthropic", "openai", "ollama") else "rate_limit_exceeded"
    )
    fake_llm.add(Turn(text="Half of an answer", fault=Fault.stream_error(error_type)))
    with pytest.raises(RateLimited):
        await stream_all(make_provider, name)
    assert len(fake_llm.model_requests()) == 1


@pytest.mark.parametrize("name", ["anthropic", "openai-responses"])
async def test_api_error_mid_stream_is_a_server_error(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    error_type = "api_error" if name == "anthropic" else "server_error"
    fake_llm.add(Turn(text="Half of an answer", fault=Fault.stream_error(error_type)))
    with pytest.raises(ServerError):
        await stream_all(make_provider, name)


@pytest.mark.parametrize("name", API_PROVIDERS)
async def test_context_overflow_is_recognised_and_not_retried(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer, sleeps: SleepRecorder
) -> None:
    fake_llm.add(Fault.context_overflow())
    with pytest.raises(ContextLengthExceeded):
        await stream_all(make_provider, name)
    assert sleeps.delays == []


async def test_responses_overflow_arriving_inside_the_stream(
    make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    # anomalyco/opencode#8089: {"type":"error","error":{"code":"context_length_exceeded",...}}
    fake_llm.add(
        Turn(text="x", fault=Fault.stream_error("context_length_exceeded", after_events=2))
    )
    with pytest.raises(ContextLengthExceeded):
        await stream_all(make_provider, "openai-responses")


@pytest.mark.parametrize(
    "flavor", ["vllm", "llamacpp", "ollama", "ollama_legacy", "lmstudio", "openrouter"]
)
async def test_each_compatible_servers_overflow_body_through_the_sdk(
    flavor: str, make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(Fault.context_overflow(flavor))
    name = "ollama" if flavor == "ollama_legacy" else flavor
    with pytest.raises(ContextLengthExceeded):
        await stream_all(make_provider, name, model="some-model")


@pytest.mark.parametrize("name", API_PROVIDERS)
@pytest.mark.parametrize("streamed", [True, False])
async def test_reply_cut_by_the_output_limit_is_a_normal_completion(
    name: str, streamed: bool, make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(Turn(text="This answer was cut", stop="max_tokens"))
    provider = make_provider(name)
    if streamed:
        last = (await stream_all(make_provider, name))[-1]
        assert isinstance(last, Completed)
        message, usage = last.message, last.usage
    else:
        message, usage = await provider.complete("", HELLO)
    assert message.text == "This answer was cut"
    assert usage.stop_reason in TRUNCATED_STOP_REASONS


async def test_lmstudio_finish_reason_length_is_not_an_overflow(
    make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    # goose #11318: LM Studio stops with finish_reason "length" when its window fills; that
    # is a truncated reply the caller can see in stop_reason, not an error.
    fake_llm.add(Turn(text="cut", stop="max_tokens"))
    message, usage = await make_provider("lmstudio", model="qwen3").complete("", HELLO)
    assert (message.text, usage.stop_reason) == ("cut", "length")
