"""Local servers tell gosling their context window; a declared limit still wins."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gosling.agent.config import ModelOverride, Settings
from gosling.agent.provider_choice import choose_provider
from gosling.providers.server_window import probe_server_window
from tests.agent.test_run_e2e import gosling, gosling_env, run_args
from tests.fakes import FakeLLMServer, FakeToolCall, FakeUsage, Turn

SUMMARY = '<analysis>a</analysis>\n```json\n{"user_intent": ["say hi"]}\n```'


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.mark.parametrize(
    ("provider", "route", "body", "tokens", "source"),
    [
        (
            "ollama",
            ("POST", "/api/show"),
            {
                "parameters": "temperature 0.7\nnum_ctx 8192",
                "model_info": {"qwen3.context_length": 40960},
            },
            8192,
            "ollama /api/show num_ctx",
        ),
        (
            "ollama",
            ("POST", "/api/show"),
            {"parameters": "temperature 0.7", "model_info": {"qwen3.context_length": 40960}},
            40960,
            "ollama /api/show qwen3.context_length",
        ),
        (
            "vllm",
            ("GET", "/v1/models"),
            {"data": [{"id": "other", "max_model_len": 4096}, {"id": "m", "max_model_len": 32768}]},
            32768,
            "vllm /v1/models max_model_len",
        ),
        (
            "llamacpp",
            ("GET", "/props"),
            {"default_generation_settings": {"n_ctx": 16384}},
            16384,
            "llama.cpp /props n_ctx",
        ),
        (
            "lmstudio",
            ("GET", "/api/v0/models"),
            {"data": [{"id": "m", "max_context_length": 131072, "loaded_context_length": 8192}]},
            8192,
            "lmstudio /api/v0/models loaded_context_length",
        ),
    ],
)
def test_each_server_kind_reports_its_window(
    server: FakeLLMServer,
    provider: str,
    route: tuple[str, str],
    body: dict[str, Any],
    tokens: int,
    source: str,
) -> None:
    server.info_routes[route] = body
    window = probe_server_window(provider, server.openai_url, "m")
    assert window is not None
    assert (window.tokens, window.source) == (tokens, source)


def test_a_server_that_says_nothing_leaves_the_registry_figure(server: FakeLLMServer) -> None:
    assert probe_server_window("llamacpp", server.openai_url, "m") is None
    provider = choose_provider(
        Settings(provider="llamacpp", model="qwen3", base_url=server.openai_url)
    )
    assert (
        provider.model_config.context_limit
        == choose_provider(
            Settings(provider="llamacpp", model="qwen3", base_url="http://127.0.0.1:9/v1")
        ).model_config.context_limit
    )


def test_the_reported_window_sizes_the_provider_unless_config_declares_one(
    server: FakeLLMServer,
) -> None:
    server.info_routes[("POST", "/api/show")] = {"parameters": "num_ctx 4096"}
    ollama = Settings(provider="ollama", model="qwen3:32b", base_url=server.openai_url)
    assert choose_provider(ollama).model_config.context_limit == 4096

    declared = ollama.model_copy(
        update={"models": {"qwen3:32b": ModelOverride(context_limit=32768)}}
    )
    assert choose_provider(declared).model_config.context_limit == 32768
    flagged = ollama.model_copy(update={"context_limit": 65536})
    assert choose_provider(flagged).model_config.context_limit == 65536


def test_gosling_run_compacts_at_the_window_ollama_runs_with(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    """The registry gives qwen3 a large window, but Ollama runs it with num_ctx 4096: the
    first call's 3,500 input tokens pass 0.8 of 4,096, so the history is compacted before
    the next call (goose users on Ollama hit "auto compact doesn't work" here)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    server.info_routes[("POST", "/api/show")] = {"parameters": "num_ctx 4096"}
    server.add(
        Turn(
            tool_calls=[FakeToolCall("developer__shell", {"command": "echo step one"})],
            usage=FakeUsage(input_tokens=3_500, output_tokens=20),
        ),
        Turn(text=SUMMARY),
        Turn(text="Done after compacting."),
    )
    result = gosling(run_args(server, "ollama", "-t", "say hi"), repo, env=gosling_env())
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Done after compacting."
    assert "compacting" in result.stderr
    assert "say hi" in json.dumps(server.model_requests()[-1].body)
