"""Whether a model name is plausible for a provider, so `/model gpt-5` on Anthropic is
refused up front instead of failing on the next call (or, behind a proxy, silently
reaching another model).

Only the first-party APIs are checked: Anthropic serves `claude-*` models and OpenAI its
own families. OpenAI-compatible and local servers (Ollama, vLLM, llama.cpp, LM Studio,
OpenRouter) serve whatever they have loaded, so any name goes there.
"""

from __future__ import annotations

import re

_FAMILIES: dict[str, re.Pattern[str]] = {
    "anthropic": re.compile(r"claude"),
    "openai": re.compile(r"(gpt|chatgpt|o\d|codex|computer-use|ft:|davinci|babbage)"),
}
_CHECKED = {"anthropic": "anthropic", "openai": "openai", "openai-responses": "openai"}
_FAMILY_NAMES = {"anthropic": "claude-* models", "openai": "OpenAI models (gpt-*, o*)"}


def _family_of(model: str) -> str | None:
    name = model.strip().lower()
    for family, pattern in _FAMILIES.items():
        if pattern.match(name):
            return family
    return None


def model_mismatch(provider: str, model: str) -> str | None:
    """Why `model` cannot be one of `provider`'s models (a sentence naming the fix), or
    None when the name is plausible or the provider serves any name."""
    family = _CHECKED.get(provider)
    if family is None or _family_of(model) == family:
        return None
    owner = _family_of(model)
    if owner == "anthropic":
        fix = f"start gosling with --provider anthropic --model {model}"
    elif owner == "openai":
        fix = f"start gosling with --provider openai --model {model}"
    else:
        fix = f"for a local or compatible server start gosling with --provider NAME --model {model}"
    return f"{provider} serves {_FAMILY_NAMES[family]}, not {model!r}; {fix}"


def model_vendor(model: str | None) -> str | None:
    """ "anthropic" or "openai" when `model` is clearly one of that vendor's first-party
    models (`claude-*`, `gpt-*`, `o3`), else None (local and compatible names)."""
    return None if model is None else _family_of(model)
