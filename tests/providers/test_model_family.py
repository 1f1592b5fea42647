"""`/model NAME` must name a model the current provider can serve."""

from __future__ import annotations

import pytest

from gosling.providers.model_family import model_mismatch


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("anthropic", "claude-sonnet-4-6"),
        ("anthropic", "Claude-Opus-4-7"),
        ("openai", "gpt-5"),
        ("openai", "o3-mini"),
        ("openai-responses", "gpt-4.1"),
        ("ollama", "qwen3"),
        ("ollama", "gpt-oss:20b"),
        ("openrouter", "anthropic/claude-sonnet-4.6"),
        ("openai-compatible", "anything-at-all"),
    ],
)
def test_names_a_provider_serves_are_accepted(provider: str, model: str) -> None:
    assert model_mismatch(provider, model) is None


@pytest.mark.parametrize(
    ("provider", "model", "fix"),
    [
        ("anthropic", "gpt-5", "--provider openai --model gpt-5"),
        ("anthropic", "qwen3", "--provider NAME --model qwen3"),
        ("openai", "claude-sonnet-4-6", "--provider anthropic --model claude-sonnet-4-6"),
        ("openai-responses", "llama3.1", "local or compatible server"),
    ],
)
def test_another_vendors_model_is_refused_with_the_fix(provider: str, model: str, fix: str) -> None:
    reason = model_mismatch(provider, model)
    assert reason is not None and fix in reason and repr(model) in reason
