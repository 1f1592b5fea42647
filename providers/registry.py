"""Context and output limits of known models, by longest matching name prefix.

The compaction threshold is a fraction of the context limit, so a wrong limit either
compacts far too early or overflows. Two rules keep it honest:

- a limit declared in config for a model always wins over a name match (goose #11049: a
  custom 32k model was taken for a 1M catalogue entry of the same name);
- an unknown model falls back to 128,000 tokens and says so in the log.

Names are matched case-insensitively after dropping a routing prefix (`anthropic/`,
`openai/`, `hf.co/org/`), so OpenRouter and Ollama spellings find the same entry.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from gosling.providers.base import DEFAULT_CONTEXT_LIMIT

logger = logging.getLogger("gosling.providers")

Source = Literal["config", "server", "registry", "default"]


@dataclass(frozen=True)
class ModelLimits:
    """What a model accepts: `context_limit` tokens in and out together, and at most
    `max_output_tokens` in one reply (None: unknown, leave the server default)."""

    context_limit: int
    max_output_tokens: int | None = None
    source: Source = "registry"
    matched: str | None = None
    """The registry entry (or config key) that decided; None for the fallback."""


K = 1_000
_M = 1_000_000

# prefix -> (context limit, max output tokens). Longest prefix wins; a prefix ending in a
# digit matches only where the name does not continue with one ("claude-opus-4-1" never
# matches "claude-opus-4-10"), so "mistral-small" still matches Ollama's "mistral-small3.2".
MODEL_LIMITS: dict[str, tuple[int, int | None]] = {
    # Anthropic. Opus 4.6+ and Sonnet 4.6+ have a native 1M window; older 4.x models have
    # 200k (Sonnet 4 / 4.5 reach 1M only with the context-1m beta, spelled "...[1m]").
    "claude-opus-4": (200 * K, 32 * K),
    "claude-opus-4-1": (200 * K, 32 * K),
    "claude-opus-4-5": (200 * K, 64 * K),
    "claude-opus-4-6": (1 * _M, 128 * K),
    "claude-opus-4-7": (1 * _M, 128 * K),
    "claude-opus-4-8": (1 * _M, 128 * K),
    "claude-opus-5": (1 * _M, 128 * K),
    "claude-fable-5": (1 * _M, 128 * K),
    "claude-mythos": (1 * _M, 128 * K),
    "claude-sonnet-4": (200 * K, 64 * K),
    "claude-sonnet-4-5": (200 * K, 64 * K),
    "claude-sonnet-4-6": (1 * _M, 128 * K),
    "claude-sonnet-5": (1 * _M, 128 * K),
    "claude-haiku-4": (200 * K, 64 * K),
    "claude-3-7-sonnet": (200 * K, 64 * K),
    "claude-3-5": (200 * K, 8192),
    "claude-3": (200 * K, 4096),
    "claude": (200 * K, 32 * K),
    # OpenAI
    "gpt-4o": (128 * K, 16384),
    "chatgpt-4o": (128 * K, 16384),
    "gpt-4.1": (1_047_576, 32768),
    "gpt-4-turbo": (128 * K, 4096),
    "gpt-4": (8192, 8192),
    "gpt-3.5-turbo": (16385, 4096),
    "gpt-5": (400 * K, 128 * K),
    "gpt-5-chat": (128 * K, 16384),
    "gpt-5.1-chat": (128 * K, 16384),
    "gpt-5.2-chat": (128 * K, 16384),
    "gpt-5.3-chat": (128 * K, 16384),
    "o1": (200 * K, 100 * K),
    "o3": (200 * K, 100 * K),
    "o4-mini": (200 * K, 100 * K),
    "codex-mini": (200 * K, 100 * K),
    "gpt-oss": (131072, 32768),
    # Open models (windows as their servers load them by default where that differs)
    "llama3": (8192, None),
    "llama-3": (8192, None),
    "llama3.1": (131072, None),
    "llama3.2": (131072, None),
    "llama3.3": (131072, None),
    "llama-3.1": (131072, None),
    "llama-3.2": (131072, None),
    "llama-3.3": (131072, None),
    "llama4": (1_048_576, None),
    "llama-4": (1_048_576, None),
    "qwen2.5": (32768, 8192),
    "qwen2.5-coder": (32768, 8192),
    "qwen3": (40960, 32768),
    "qwen3-coder": (262144, 65536),
    "qwq": (131072, 32768),
    "deepseek-r1": (131072, 32768),
    "deepseek-v3": (131072, 8192),
    "deepseek-chat": (131072, 8192),
    "deepseek-reasoner": (131072, 65536),
    "deepseek-coder-v2": (163840, None),
    "mistral": (32768, None),
    "mistral-small": (131072, None),
    "mistral-medium": (131072, None),
    "mistral-large": (131072, None),
    "mistral-nemo": (131072, None),
    "mixtral": (32768, None),
    "codestral": (256 * K, None),
    "devstral": (131072, None),
    "gemma2": (8192, None),
    "gemma-2": (8192, None),
    "gemma3": (131072, 8192),
    "gemma-3": (131072, 8192),
    "gemma3n": (32768, None),
    "gemma4": (131072, None),
    "phi3": (131072, None),
    "phi4": (16384, None),
}


def normalize_model_name(name: str) -> str:
    """Lower-case the name and drop any routing prefix (`vendor/`, `hf.co/org/`)."""
    return name.strip().lower().rsplit("/", 1)[-1]


def _match(name: str, table: Iterable[str]) -> str | None:
    best: str | None = None
    for prefix in table:
        if not name.startswith(prefix):
            continue
        rest = name[len(prefix) :]
        if prefix[-1].isdigit() and rest[:1].isdigit():
            continue
        if best is None or len(prefix) > len(best):
            best = prefix
    return best


def table_entry(name: str, table: Iterable[str]) -> str | None:
    """The longest key of `table` that prefixes model `name` in any of its spellings (a
    key ending in a digit never matches a name that continues with one)."""
    normalized = normalize_model_name(name)
    found = _match(normalized, table)
    if "." in normalized:
        # OpenRouter writes "claude-sonnet-4.6" where Anthropic writes "claude-sonnet-4-6";
        # the spelling with the longer match decides ("gpt-4.1" keeps its dot).
        dashed = _match(normalized.replace(".", "-"), table)
        if dashed is not None and (found is None or len(dashed) > len(found)):
            found = dashed
    return found


def _registry_entry(name: str) -> str | None:
    return table_entry(name, MODEL_LIMITS)


def _is_one_million_variant(name: str) -> bool:
    lowered = name.lower()
    return lowered.endswith("[1m]") or lowered.endswith("-1m")


_warned: set[str] = set()


def lookup_model(
    name: str, overrides: Mapping[str, int | ModelLimits] | None = None
) -> ModelLimits:
    """The limits of model `name`. `overrides` maps model names (as configured) to a
    context limit or full `ModelLimits`; an override for this model always wins."""
    if overrides:
        wanted = name.strip().lower()
        for key, value in overrides.items():
            if key.strip().lower() == wanted:
                if isinstance(value, ModelLimits):
                    source = value.source if value.source == "server" else "config"
                    return ModelLimits(value.context_limit, value.max_output_tokens, source, key)
                entry = _registry_entry(name)
                output = MODEL_LIMITS[entry][1] if entry else None
                if output is not None and output >= value:
                    output = None
                return ModelLimits(int(value), output, "config", key)

    entry = _registry_entry(name)
    if entry is None:
        if name not in _warned:
            _warned.add(name)
            logger.warning(
                "unknown model %r: assuming a %d-token context window; declare its "
                "context_limit in config if that is wrong",
                name,
                DEFAULT_CONTEXT_LIMIT,
            )
        return ModelLimits(DEFAULT_CONTEXT_LIMIT, None, "default", None)
    context, output = MODEL_LIMITS[entry]
    if _is_one_million_variant(name):
        context = max(context, 1 * _M)
    return ModelLimits(context, output, "registry", entry)
