"""Model limits: names as users and servers spell them, config overrides, and the fallback."""

from __future__ import annotations

import logging

import pytest

from gosling.providers import DEFAULT_CONTEXT_LIMIT, ModelLimits, lookup_model


@pytest.mark.parametrize(
    ("name", "context", "output"),
    [
        ("claude-sonnet-4-5-20250929", 200_000, 64_000),
        ("claude-sonnet-4-6", 1_000_000, 128_000),
        ("claude-opus-4-1-20250805", 200_000, 32_000),
        ("claude-opus-4-20250514", 200_000, 32_000),
        ("claude-opus-4-7", 1_000_000, 128_000),
        ("claude-haiku-4-5-20251001", 200_000, 64_000),
        ("gpt-4o-mini", 128_000, 16_384),
        ("gpt-4.1-nano", 1_047_576, 32_768),
        ("gpt-5-mini", 400_000, 128_000),
        ("gpt-5.2", 400_000, 128_000),
        ("gpt-5-chat-latest", 128_000, 16_384),
        ("o3-mini", 200_000, 100_000),
        ("o4-mini-2025-04-16", 200_000, 100_000),
        ("llama3.1:8b", 131_072, None),
        ("llama3:8b", 8_192, None),
        ("meta-llama/Llama-3.3-70B-Instruct", 131_072, None),
        ("qwen2.5-coder:7b", 32_768, 8_192),
        ("qwen3:14b", 40_960, 32_768),
        ("hf.co/unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF:UD-Q4_K_XL", 262_144, 65_536),
        ("deepseek-r1:14b", 131_072, 32_768),
        ("mistral-small3.2:24b", 131_072, None),
        ("gemma3:27b", 131_072, 8_192),
    ],
)
def test_known_models_by_their_usual_spellings(name: str, context: int, output: int | None) -> None:
    limits = lookup_model(name)
    assert (limits.context_limit, limits.max_output_tokens, limits.source) == (
        context,
        output,
        "registry",
    )


def test_openrouter_names_with_vendor_and_dots() -> None:
    assert lookup_model("anthropic/claude-sonnet-4.5").context_limit == 200_000
    assert lookup_model("anthropic/claude-sonnet-4.6").context_limit == 1_000_000
    assert lookup_model("openai/gpt-4o").context_limit == 128_000


def test_one_million_variant_suffix() -> None:
    assert lookup_model("claude-sonnet-4-5[1m]").context_limit == 1_000_000


def test_a_prefix_ending_in_a_digit_does_not_swallow_longer_numbers() -> None:
    # "claude-opus-4-1" must not decide for a hypothetical "claude-opus-4-10"
    assert lookup_model("claude-opus-4-10").matched == "claude-opus-4"


def test_declared_limit_beats_a_name_match() -> None:
    # goose #11049: a custom 32k deployment named like a 1M catalogue model got 1M.
    limits = lookup_model("claude-sonnet-4-6", {"claude-sonnet-4-6": 32_000})
    assert limits.context_limit == 32_000 and limits.source == "config"
    assert limits.max_output_tokens is None  # the catalogue's 128k output cannot fit in 32k


def test_declared_full_limits_and_case_insensitive_keys() -> None:
    declared = ModelLimits(context_limit=8_192, max_output_tokens=1_024)
    limits = lookup_model("My-Local-Model", {"my-local-model": declared})
    assert (limits.context_limit, limits.max_output_tokens, limits.source) == (
        8_192,
        1_024,
        "config",
    )


def test_overrides_for_other_models_do_not_apply() -> None:
    assert lookup_model("gpt-4o", {"gpt-4.1": 5}).context_limit == 128_000


def test_unknown_model_falls_back_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="gosling.providers"):
        limits = lookup_model("totally-new-model-9000")
    assert limits == ModelLimits(DEFAULT_CONTEXT_LIMIT, None, "default", None)
    assert DEFAULT_CONTEXT_LIMIT == 128_000
    assert "totally-new-model-9000" in caplog.text and "context_limit" in caplog.text
