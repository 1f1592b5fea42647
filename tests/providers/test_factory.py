"""Providers by name: keys and URLs from the usual variables, clear errors when missing, and
no real endpoint while testing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gosling.conversation import Message
from gosling.providers import (
    PROVIDER_NAMES,
    MissingApiKey,
    ProviderConfigError,
    create_provider,
)
from gosling.providers.anthropic import AnthropicProvider
from gosling.providers.factory import ollama_base_url
from gosling.providers.openai_chat import OpenAIChatProvider
from gosling.providers.openai_compatible import OpenAICompatibleProvider
from gosling.providers.openai_responses import OpenAIResponsesProvider
from gosling.providers.sdk_provider import SdkProvider, is_loopback_url


def test_the_documented_provider_names() -> None:
    assert PROVIDER_NAMES == (
        "anthropic",
        "openai",
        "openai-responses",
        "ollama",
        "vllm",
        "llamacpp",
        "lmstudio",
        "openrouter",
        "openai-compatible",
    )


@pytest.mark.parametrize(
    ("name", "env", "cls", "url"),
    [
        ("anthropic", {"ANTHROPIC_API_KEY": "a"}, AnthropicProvider, "https://api.anthropic.com"),
        ("openai", {"OPENAI_API_KEY": "o"}, OpenAIChatProvider, "https://api.openai.com/v1"),
        (
            "openai-responses",
            {"OPENAI_API_KEY": "o"},
            OpenAIResponsesProvider,
            "https://api.openai.com/v1",
        ),
        ("ollama", {}, OpenAICompatibleProvider, "http://localhost:11434/v1"),
        ("vllm", {}, OpenAICompatibleProvider, "http://localhost:8000/v1"),
        ("llamacpp", {}, OpenAICompatibleProvider, "http://localhost:8080/v1"),
        ("lmstudio", {}, OpenAICompatibleProvider, "http://localhost:1234/v1"),
        (
            "openrouter",
            {"OPENROUTER_API_KEY": "r"},
            OpenAICompatibleProvider,
            "https://openrouter.ai/api/v1",
        ),
    ],
)
def test_each_name_builds_its_adapter_with_the_default_url(
    name: str, env: dict[str, str], cls: type[SdkProvider], url: str
) -> None:
    provider = create_provider(name, "some-model", env=env)
    assert type(provider) is cls
    assert isinstance(provider, SdkProvider)
    assert provider.base_url == url and provider.name == name


@pytest.mark.parametrize(
    ("name", "variable"),
    [
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("openai", "OPENAI_API_KEY"),
        ("openai-responses", "OPENAI_API_KEY"),
        ("openrouter", "OPENROUTER_API_KEY"),
    ],
)
def test_missing_key_names_the_variable_to_set(name: str, variable: str) -> None:
    with pytest.raises(MissingApiKey) as failure:
        create_provider(name, "m", env={variable: "  "})
    assert failure.value.env_var == variable
    assert f"set {variable}" in str(failure.value)


def test_local_servers_need_no_key() -> None:
    provider = create_provider("ollama", "llama3.1", env={})
    assert isinstance(provider, SdkProvider) and provider.api_key == "ollama"


def test_explicit_arguments_beat_the_environment() -> None:
    env = {"OPENAI_API_KEY": "from-env", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    from_env = create_provider("openai", "gpt-4o", env=env)
    explicit = create_provider(
        "openai", "gpt-4o", api_key="given", base_url="http://127.0.0.1:7/v1", env=env
    )
    assert isinstance(from_env, SdkProvider) and isinstance(explicit, SdkProvider)
    assert (from_env.api_key, from_env.base_url) == ("from-env", "http://127.0.0.1:9/v1")
    assert (explicit.api_key, explicit.base_url) == ("given", "http://127.0.0.1:7/v1")


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("0.0.0.0:11434", "http://0.0.0.0:11434/v1"),
        ("localhost", "http://localhost:11434/v1"),
        ("http://gpu-box:9999", "http://gpu-box:9999/v1"),
        ("https://ollama.example/", "https://ollama.example/v1"),
    ],
)
def test_ollama_host_in_its_usual_forms(host: str, url: str) -> None:
    provider = create_provider("ollama", "qwen3", env={"OLLAMA_HOST": host})
    assert isinstance(provider, SdkProvider) and provider.base_url == url
    assert ollama_base_url(host) + "/v1" == url


def test_openai_compatible_needs_a_base_url() -> None:
    with pytest.raises(ProviderConfigError, match="--base-url or set OPENAI_BASE_URL"):
        create_provider("openai-compatible", "my-model", env={})


def test_unknown_name_lists_the_choices() -> None:
    with pytest.raises(ProviderConfigError) as failure:
        create_provider("gemini", "x", env={})
    assert all(name in str(failure.value) for name in PROVIDER_NAMES)


def test_aliases() -> None:
    assert isinstance(create_provider("llama.cpp", "m", env={}), OpenAICompatibleProvider)
    assert isinstance(create_provider("claude", env={"ANTHROPIC_API_KEY": "k"}), AnthropicProvider)


def test_model_is_required_where_there_is_no_default() -> None:
    with pytest.raises(ProviderConfigError, match="--model"):
        create_provider("vllm", env={})


def test_limits_come_from_flag_then_config_then_registry() -> None:
    env = {"ANTHROPIC_API_KEY": "k"}
    registry = create_provider("anthropic", "claude-haiku-4-5", env=env)
    config = create_provider(
        "anthropic", "claude-haiku-4-5", env=env, model_limits={"claude-haiku-4-5": 50_000}
    )
    flag = create_provider(
        "anthropic",
        "claude-haiku-4-5",
        env=env,
        model_limits={"claude-haiku-4-5": 50_000},
        context_limit=9_000,
    )
    assert registry.model_config.context_limit == 200_000
    assert config.model_config.context_limit == 50_000
    assert flag.model_config.context_limit == 9_000


def test_default_models() -> None:
    assert (
        create_provider("anthropic", env={"ANTHROPIC_API_KEY": "k"}).model_config.model
        == "claude-sonnet-4-6"
    )
    assert create_provider("openai", env={"OPENAI_API_KEY": "k"}).model_config.model == "gpt-5"


async def test_real_endpoints_are_refused_while_testing() -> None:
    provider = create_provider("anthropic", "claude-sonnet-4-6", env={"ANTHROPIC_API_KEY": "k"})
    with pytest.raises(ProviderConfigError, match="GOSLING_TESTING"):
        await provider.complete("", [Message.user("hi")])


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://127.0.0.2", True),
        ("http://[::1]:11434", True),
        ("http://localhost:1234/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8000", False),
        ("http://localhost.evil.example", False),
        ("not a url", False),
    ],
)
def test_what_counts_as_loopback(url: str, loopback: bool) -> None:
    assert is_loopback_url(url) is loopback


def test_importing_providers_loads_no_sdk() -> None:
    code = (
        "import sys; from gosling import providers; "
        "providers.create_provider('ollama', 'm', env={}); "
        "print(sorted(m for m in ('anthropic', 'openai', 'httpx2') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
