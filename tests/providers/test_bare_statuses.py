"""Statuses that arrive without an error type the adapter knows (a proxy's HTML page, a bare
500 from a gateway): the status alone decides, through each real SDK, what the user sees."""

from __future__ import annotations

import pytest

from gosling.conversation import Message
from gosling.providers import AuthenticationFailed, RetryPolicy, ServerError
from tests.fakes.fixtures import SleepRecorder
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.script import Fault, Turn
from tests.providers.conftest import API_PROVIDERS, MakeProvider

HELLO = [Message.user("hello")]
KEY_VARIABLE = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


@pytest.mark.parametrize("name", API_PROVIDERS)
@pytest.mark.parametrize("status", [500, 502])
async def test_a_bare_server_failure_is_retried(
    name: str,
    status: int,
    make_provider: MakeProvider,
    fake_llm: FakeLLMServer,
    sleeps: SleepRecorder,
) -> None:
    fake_llm.add(Fault.http_status(status, "<html>Internal Server Error</html>"), Turn(text="ok"))
    message, _ = await make_provider(name).complete("", HELLO)
    assert message.text == "ok"
    assert sleeps.delays == [1.0]


@pytest.mark.parametrize("name", API_PROVIDERS)
async def test_a_bare_403_is_an_authentication_failure_not_retried(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer, sleeps: SleepRecorder
) -> None:
    fake_llm.add(Fault.http_status(403, "<html>403 Forbidden</html>"))
    with pytest.raises(AuthenticationFailed) as failure:
        await make_provider(name).complete("", HELLO)
    assert failure.value.status == 403
    if name in KEY_VARIABLE:
        assert KEY_VARIABLE[name] in str(failure.value)
    assert sleeps.delays == []
    assert len(fake_llm.model_requests()) == 1


async def test_a_bare_500_raised_to_the_user_is_a_server_error(
    make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(Fault.http_status(500, "upstream failed"))
    with pytest.raises(ServerError, match="500"):
        await make_provider("openai", retry=RetryPolicy(max_retries=0)).complete("", HELLO)
