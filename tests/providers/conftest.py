"""Fixtures for provider tests: the fake LLM server and a provider for each wire API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gosling.providers import Provider, RetryPolicy, create_provider
from tests.fakes.fixtures import fake_llm, no_wait_retry, sleeps  # noqa: F401
from tests.fakes.llm_server import FakeLLMServer

# One provider name per wire format the fake server speaks, plus a compatible server.
API_PROVIDERS = ("anthropic", "openai", "openai-responses", "ollama")
MODELS = {
    "anthropic": "claude-sonnet-4-6",
    "openai": "gpt-4.1",
    "openai-responses": "gpt-5",
    "ollama": "qwen3",
}

MakeProvider = Callable[..., Provider]


def provider_for(
    name: str, server: FakeLLMServer, retry: RetryPolicy | None = None, **kwargs: Any
) -> Provider:
    """Provider `name` pointed at the fake server, with a test key and no environment."""
    url = server.url if name == "anthropic" else server.openai_url
    kwargs.setdefault("model", MODELS.get(name, "test-model"))
    return create_provider(name, base_url=url, api_key="test-key", env={}, retry=retry, **kwargs)


@pytest.fixture
def make_provider(fake_llm: FakeLLMServer, no_wait_retry: RetryPolicy) -> MakeProvider:  # noqa: F811
    def make(name: str, **kwargs: Any) -> Provider:
        kwargs.setdefault("retry", no_wait_retry)
        return provider_for(name, fake_llm, **kwargs)

    return make
