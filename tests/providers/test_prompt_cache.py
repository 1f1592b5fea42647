"""Which cache model a model gets, and that it agrees with the list prices."""

from __future__ import annotations

from pathlib import Path

import pytest

from gosling.agent.config import ConfigError, Settings, load_settings
from gosling.agent.provider_choice import model_prompt_cache
from gosling.prompts.locations import user_dirs
from gosling.providers.pricing import MODEL_PRICES, ModelPrice
from gosling.providers.prompt_cache import PromptCacheOverride, cache_family, prompt_cache_for


@pytest.mark.parametrize("model", sorted(MODEL_PRICES))
def test_ratios_agree_with_the_price_table(model: str) -> None:
    price = MODEL_PRICES[model]
    cache = prompt_cache_for(model)
    assert cache.read * price.input == pytest.approx(price.cache_read, abs=1e-6)
    assert cache.write * price.input == pytest.approx(price.cache_write, abs=1e-6)
    assert cache.output * price.input == pytest.approx(price.output)


def test_families_and_their_ratios() -> None:
    sonnet = prompt_cache_for("claude-sonnet-4-5", "anthropic")
    assert (sonnet.mechanism, sonnet.read, sonnet.write, sonnet.min_tokens) == (
        "breakpoints", 0.1, 1.25, 1024,
    )  # fmt: skip
    assert prompt_cache_for("claude-opus-4-5").min_tokens == 4096
    gpt4o = prompt_cache_for("gpt-4o", "openai")
    assert (gpt4o.mechanism, gpt4o.read, gpt4o.write, gpt4o.block_tokens) == (
        "prefix", 0.5, 0.0, 128,
    )  # fmt: skip
    assert prompt_cache_for("gpt-5", "openai-responses").read == pytest.approx(0.1)
    # a local server bills nothing but reuses a shared prefix (priced in time); a gateway
    # passes the vendor's cache through
    local = prompt_cache_for("qwen3:32b", "ollama")
    assert (local.mechanism, local.read, local.write, local.min_tokens) == ("prefix", 0.1, 0.0, 0)
    assert cache_family("Qwen/Qwen3-8B", "vllm") == "local"
    assert cache_family("anthropic/claude-sonnet-4.5", "openrouter") == "anthropic"
    assert cache_family("openai/gpt-4.1-mini", "openrouter") == "openai"
    assert cache_family("some-local-model") == "none"


def test_an_unpriced_model_keeps_the_family_defaults() -> None:
    cache = prompt_cache_for("claude-next-preview", "anthropic")
    assert (cache.read, cache.write, cache.output) == (0.1, 1.25, 5.0)


def test_config_price_and_cache_override_win() -> None:
    prices = {"gpt-4o": ModelPrice(input=2.0, output=8.0, cache_read=1.0, cache_write=0.0)}
    assert prompt_cache_for("gpt-4o", prices=prices).read == pytest.approx(0.5)
    override = PromptCacheOverride(family="openai", read=0.25, min_tokens=2048)
    cache = prompt_cache_for("my-proxy-model", "openai-compatible", override=override)
    assert (cache.mechanism, cache.read, cache.min_tokens, cache.block_tokens) == (
        "prefix", 0.25, 2048, 128,
    )  # fmt: skip


def _user_config(text: str) -> None:
    path = user_dirs().config / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_models_cache_table_in_config_reaches_the_cost_model(tmp_path: Path) -> None:
    _user_config(
        '[models."corp-claude"]\ncontext_limit = 200000\n'
        '[models."corp-claude".cache]\nfamily = "anthropic"\nread = 0.2\n'
    )
    settings = load_settings(tmp_path, environ={}).settings
    cache = model_prompt_cache(settings, "corp-claude", "openai-compatible")
    assert (cache.mechanism, cache.read, cache.write) == ("breakpoints", 0.2, 1.25)
    assert model_prompt_cache(Settings(), "gpt-4o", "openai").read == pytest.approx(0.5)


def test_a_bad_cache_table_is_a_config_error(tmp_path: Path) -> None:
    _user_config('[models."x".cache]\nfamily = "gemini"\n')
    with pytest.raises(ConfigError, match="'anthropic', 'openai', 'local' or 'none'"):
        load_settings(tmp_path, environ={})
