"""A server that never finishes a reply (keep-alive pings forever) cannot hold a call open:
the call's deadlines end it with a retryable `TimedOut`. DNS failures are retried too."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from gosling.conversation import Message
from gosling.providers import Completed, Provider, RetryPolicy, create_provider
from gosling.providers.deadlines import CallDeadlines, Deadline
from gosling.providers.errors import ServerError, TimedOut
from gosling.providers.sdk_provider import SdkProvider
from tests.fakes.fixtures import SleepRecorder
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.script import Fault, Turn
from tests.providers.conftest import API_PROVIDERS, MODELS, MakeProvider

HELLO = [Message.user("hello")]
SHORT = CallDeadlines(request=1.0, first_byte=0.8)


async def warmed(provider: Provider, deadlines: CallDeadlines = SHORT) -> Provider:
    """One ordinary call first, under the default deadlines, so that SDK imports and
    connection setup on a busy machine are not what times out; then the short ones."""
    await provider.complete("", HELLO)
    assert isinstance(provider, SdkProvider)
    provider.deadlines = deadlines
    return provider


@pytest.mark.parametrize("name", API_PROVIDERS)
async def test_a_trickling_stream_times_out_and_is_retried(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer, sleeps: SleepRecorder
) -> None:
    fake_llm.add(Turn(text="warm-up"), Fault.trickle(after_events=2), Turn(text="Second try."))
    provider = await warmed(make_provider(name))
    events = [event async for event in provider.stream("", HELLO)]
    last = events[-1]
    assert isinstance(last, Completed) and last.message.text == "Second try."
    assert len(sleeps.delays) == 1  # one retry, after the timeout


@pytest.mark.parametrize("name", ["anthropic", "openai"])
async def test_without_retries_the_timeout_is_the_error(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(Turn(text="warm-up"), Fault.trickle())
    provider = await warmed(make_provider(name, retry=RetryPolicy(max_retries=0)))
    with pytest.raises(TimedOut, match="request_timeout"):
        async for _ in provider.stream("", HELLO):
            pass


async def test_a_non_streamed_call_that_never_ends_times_out(
    make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(Turn(text="warm-up"), Fault.trickle())
    provider = await warmed(make_provider("openai", retry=RetryPolicy(max_retries=0)))
    with pytest.raises(TimedOut):
        await provider.complete("", HELLO)


async def test_a_server_that_never_answers_hits_the_first_byte_timeout(
    make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(Turn(text="warm-up"), Turn(text="too late", delay=30))
    deadlines = CallDeadlines(request=20, first_byte=1.0)
    provider = await warmed(make_provider("anthropic", retry=RetryPolicy(max_retries=0)), deadlines)
    with pytest.raises(TimedOut, match="first_byte_timeout"):
        async for _ in provider.stream("", HELLO):
            pass


@pytest.mark.parametrize("name", API_PROVIDERS)
async def test_dns_failures_are_retried(
    name: str,
    no_wait_retry: RetryPolicy,
    fake_llm: FakeLLMServer,
    sleeps: SleepRecorder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_such_host(*args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_such_host)
    url = fake_llm.url.replace("127.0.0.1", "localhost")
    provider = create_provider(
        name,
        MODELS[name],
        base_url=url if name == "anthropic" else f"{url}/v1",
        api_key="test-key",
        env={},
        retry=no_wait_retry,
    )
    with pytest.raises(ServerError, match="Name or service not known"):
        async for _ in provider.stream("", HELLO):
            pass
    assert len(sleeps.delays) == 3


GOSLING = [sys.executable, "-m", "gosling", "run", "--provider", "anthropic", "--model", "m"]


def test_gosling_run_ends_a_trickling_call_with_one_error_line(tmp_path: Path) -> None:
    """Through the CLI: `request_timeout` from the environment, no retries left."""
    with FakeLLMServer([Fault.trickle()]) as server:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env |= {
            "ANTHROPIC_API_KEY": "test-key",
            "GOSLING_MAX_RETRIES": "0",
            "GOSLING_REQUEST_TIMEOUT": "3",
        }
        result = subprocess.run(
            [*GOSLING, "--base-url", server.url, "-t", "hi"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "error: anthropic: the reply did not complete within 3 s" in result.stderr


async def _never() -> None:
    await asyncio.Event().wait()


async def test_the_overall_deadline_also_bounds_the_wait_for_the_first_byte() -> None:
    """`request_timeout` is the most one attempt may take, whatever `first_byte_timeout`
    says; the outer bound only keeps a regression from hanging the suite."""
    deadline = Deadline(CallDeadlines(request=0.2, first_byte=3600), provider="p")
    with pytest.raises(TimedOut, match="request_timeout"):
        await asyncio.wait_for(deadline.first_byte(_never()), 30)


async def test_a_stream_that_keeps_trickling_items_still_ends_at_the_deadline() -> None:
    """A reply that sends a delta every tenth of a second but never completes: the deadline
    runs from the request, not from the last item."""

    async def trickle() -> AsyncIterator[str]:
        while True:
            await asyncio.sleep(0.02)
            yield "delta"

    deadline = Deadline(CallDeadlines(request=0.3, first_byte=0.3), provider="p")
    seen: list[str] = []

    async def consume() -> None:
        async for item in deadline.iterate(trickle()):
            seen.append(item)

    with pytest.raises(TimedOut, match="request_timeout"):
        await asyncio.wait_for(consume(), 30)
    assert seen  # items did arrive; they did not extend the deadline


async def test_a_whole_reply_past_its_deadline_names_request_timeout_not_the_first_byte() -> None:
    deadline = Deadline(CallDeadlines(request=0.1, first_byte=0.05), provider="p")
    with pytest.raises(TimedOut) as raised:
        await asyncio.wait_for(deadline.whole(_never()), 30)
    assert str(raised.value) == (
        "p: the reply did not complete within 0.1 s (request_timeout in config)"
    )


def test_a_connection_failure_names_the_base_url_and_the_cause() -> None:
    import httpx2
    import openai

    from gosling.providers.error_mapping import translate_exception

    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except ConnectionRefusedError as cause:
            raise openai.APIConnectionError(request=request) from cause
    except openai.APIConnectionError as exc:
        error = translate_exception(
            exc, sdk=openai, provider="openai", base_url="http://127.0.0.1:9/v1"
        )
    assert isinstance(error, ServerError)
    text = str(error)
    assert "cannot connect to http://127.0.0.1:9/v1 ([Errno 111] Connection refused)" in text
    assert "check that the server is running and the base URL" in text
    try:
        try:
            raise ConnectionResetError(104, "Connection reset by peer")
        except ConnectionResetError:
            raise openai.APIConnectionError(request=request)  # noqa: B904 - chained implicitly
    except openai.APIConnectionError as exc:
        implicit = translate_exception(exc, sdk=openai, provider="openai")
    assert "([Errno 104] Connection reset by peer)" in str(implicit)
    bare = translate_exception(
        openai.APIConnectionError(request=request), sdk=openai, provider="openai"
    )
    assert "cannot connect to the server;" in str(bare)
