"""How a provider caches prompts, and what a cached token costs relative to a new one.

Users pay for input tokens at three rates: new input, cache reads and cache writes. Which
tokens fall into which depends on how the provider caches, so a `PromptCache` states both:

- `breakpoints` (Anthropic): the prefix up to each cache breakpoint is written (1.25x the
  input price for the 5-minute cache); a later request reads (0.1x) the longest previously
  written prefix it repeats, looked for at its own breakpoints and up to about 20 content
  blocks before each. gosling puts breakpoints on the system prompt and on the last two user
  turns (`providers/anthropic.py`). Prefixes under a per-model minimum are not cached.
- `prefix` (OpenAI): every prompt of at least 1,024 tokens is cached for free; a later request
  reads the longest prefix it shares with an earlier one, in blocks of 128 tokens, at the
  model's cached-input price (0.1x to 0.5x of input).
- `local`: a server on the user's machine (llama.cpp, vLLM, Ollama, LM Studio) keeps the
  attention state of the prompt it last processed and reuses the longest shared prefix, so a
  changed prefix costs its prefill time again. It bills nothing; the ratios are in time (a
  reused token about a tenth of a new one), which is what decides when trimming pays.
- `none`: every token is new input (unknown providers, scripted ones in tests).

Ratios are derived from `providers.pricing` where the model has a known price, so the list
prices and the cost model never disagree; config can override any field
(`[models."x".cache] read = 0.25`). Pure data, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gosling.providers.pricing import ModelPrice, lookup_price
from gosling.providers.registry import normalize_model_name, table_entry

CacheMechanism = Literal["breakpoints", "prefix", "none"]
CacheFamily = Literal["anthropic", "openai", "local", "none"]


class PromptCache(BaseModel):
    """How one model's prompts are cached and priced, in units of one new input token."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mechanism: CacheMechanism
    read: float = Field(ge=0)
    """Price of a token served from the cache, relative to a new input token."""
    write: float = Field(ge=0)
    """Price of a token written to the cache (new input that is also stored)."""
    output: float = Field(default=1.0, ge=0)
    """Price of an output token relative to a new input token (1 when the price is unknown)."""
    min_tokens: int = Field(default=1024, ge=0)
    """The shortest prefix the provider caches."""
    block_tokens: int = Field(default=1, ge=1)
    """Cached lengths are whole multiples of this (OpenAI: 128)."""
    lookback: int = Field(default=20, ge=0)
    """`breakpoints`: how many segments before a breakpoint a cache hit is still found."""


class PromptCacheOverride(BaseModel):
    """`[models."x".cache]` in config: any field set here beats the built-in value."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    family: CacheFamily | None = None
    """Cache like this provider family (anthropic, openai, none)."""
    read: float | None = Field(default=None, ge=0)
    write: float | None = Field(default=None, ge=0)
    output: float | None = Field(default=None, ge=0)
    min_tokens: int | None = Field(default=None, ge=0)
    block_tokens: int | None = Field(default=None, ge=1)
    lookback: int | None = Field(default=None, ge=0)


ANTHROPIC_CACHE = PromptCache(mechanism="breakpoints", read=0.1, write=1.25, output=5.0)
OPENAI_CACHE = PromptCache(
    mechanism="prefix", read=0.1, write=0.0, output=8.0, block_tokens=128, lookback=0
)
LOCAL_CACHE = PromptCache(
    mechanism="prefix", read=0.1, write=0.0, output=1.0, min_tokens=0, lookback=0
)
NO_CACHE = PromptCache(mechanism="none", read=1.0, write=1.0, min_tokens=0, lookback=0)

FAMILY_CACHES: dict[CacheFamily, PromptCache] = {
    "anthropic": ANTHROPIC_CACHE,
    "openai": OPENAI_CACHE,
    "local": LOCAL_CACHE,
    "none": NO_CACHE,
}

# Anthropic's shortest cacheable prefix per model (longest name prefix wins; 1,024 otherwise).
ANTHROPIC_MIN_TOKENS: dict[str, int] = {
    "claude-opus-4-5": 4096,
    "claude-opus-4-6": 4096,
    "claude-sonnet-4-6": 2048,
    "claude-haiku-4-5": 4096,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
}

_PROVIDER_FAMILIES: dict[str, CacheFamily] = {
    "anthropic": "anthropic",
    "claude": "anthropic",
    "openai": "openai",
    "openai-chat": "openai",
    "openai-responses": "openai",
    "responses": "openai",
    "ollama": "local",
    "vllm": "local",
    "llamacpp": "local",
    "llama.cpp": "local",
    "lmstudio": "local",
    "lm-studio": "local",
    "scripted": "none",
}
_OPENAI_MODEL_PREFIXES = ("gpt-", "chatgpt-", "o1", "o3", "o4", "codex-")


def cache_family(model: str, provider: str | None = None) -> CacheFamily:
    """The family whose caching applies: the provider's when it has one (a local server
    bills nothing for its prefix cache), else read from the model's name (OpenRouter and
    other gateways pass Anthropic's breakpoints and OpenAI's prefix cache through)."""
    if provider is not None:
        family = _PROVIDER_FAMILIES.get(provider.strip().lower())
        if family is not None:
            return family
    name = normalize_model_name(model)
    if name.startswith("claude"):
        return "anthropic"
    if name.startswith(_OPENAI_MODEL_PREFIXES):
        return "openai"
    return "none"


def _ratio(price: float | None, input_price: float, default: float) -> float:
    if price is None:
        return 1.0
    return round(price / input_price, 6) if input_price > 0 else default


def _priced(cache: PromptCache, price: ModelPrice) -> PromptCache:
    """`cache` with its ratios taken from the model's list price."""
    output = _ratio(price.output, price.input, cache.output)
    if cache.mechanism == "none":
        return cache.model_copy(update={"output": output})
    return cache.model_copy(
        update={
            "read": _ratio(price.cache_read, price.input, cache.read),
            "write": _ratio(price.cache_write, price.input, cache.write),
            "output": output,
        }
    )


def prompt_cache_for(
    model: str,
    provider: str | None = None,
    *,
    prices: Mapping[str, ModelPrice] | None = None,
    override: PromptCacheOverride | None = None,
) -> PromptCache:
    """The cache model of `model` (on `provider` when given): the family's defaults, its
    ratios from the model's price (config prices first), then the config override."""
    family = override.family if override and override.family else cache_family(model, provider)
    cache = FAMILY_CACHES[family]
    price = lookup_price(model, prices)
    if price is not None:
        cache = _priced(cache, price)
    if family == "anthropic":
        entry = table_entry(model, ANTHROPIC_MIN_TOKENS)
        if entry is not None:
            cache = cache.model_copy(update={"min_tokens": ANTHROPIC_MIN_TOKENS[entry]})
    if override is not None:
        fields = override.model_dump(exclude_none=True, exclude={"family"})
        cache = cache.model_copy(update=fields)
    return PromptCache.model_validate(cache.model_dump())
