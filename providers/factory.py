"""`create_provider`: a provider by name, with keys and URLs from arguments or the usual
environment variables, and limits from config or the model registry.

Precedence for every setting: explicit argument > environment variable > built-in default.
A missing key is an error that names the variable to set; so is a missing base URL.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from gosling.providers.base import ModelConfig, Provider
from gosling.providers.deadlines import CallDeadlines
from gosling.providers.errors import MissingApiKey, ProviderConfigError
from gosling.providers.openai_compatible import PROFILES, CompatProfile
from gosling.providers.registry import ModelLimits, lookup_model
from gosling.providers.retry import RetryPolicy
from gosling.providers.sdk_provider import DEFAULT_TIMEOUT

Api = Literal["anthropic", "openai-chat", "openai-responses"]


@dataclass(frozen=True)
class ProviderInfo:
    """What a user needs to know to use a provider (README, `gosling config`)."""

    name: str
    api: Api
    api_key_env: str | None
    api_key_required: bool
    base_url_env: str | None
    default_base_url: str | None
    default_model: str | None


_OPENAI_URL = "https://api.openai.com/v1"

PROVIDERS: dict[str, ProviderInfo] = {
    "anthropic": ProviderInfo(
        "anthropic", "anthropic", "ANTHROPIC_API_KEY", True, "ANTHROPIC_BASE_URL",
        "https://api.anthropic.com", "claude-sonnet-4-6",
    ),
    "openai": ProviderInfo(
        "openai", "openai-chat", "OPENAI_API_KEY", True, "OPENAI_BASE_URL", _OPENAI_URL, "gpt-5"
    ),
    "openai-responses": ProviderInfo(
        "openai-responses", "openai-responses", "OPENAI_API_KEY", True, "OPENAI_BASE_URL",
        _OPENAI_URL, "gpt-5",
    ),
    **{
        name: ProviderInfo(
            name, "openai-chat", p.api_key_env, p.api_key_required, p.base_url_env,
            p.default_base_url, p.default_model,
        )
        for name, p in PROFILES.items()
    },
}  # fmt: skip

PROVIDER_NAMES: tuple[str, ...] = tuple(PROVIDERS)

_ALIASES = {
    "claude": "anthropic",
    "openai-chat": "openai",
    "responses": "openai-responses",
    "llama.cpp": "llamacpp",
    "llama-cpp": "llamacpp",
    "lm-studio": "lmstudio",
    "openai_compatible": "openai-compatible",
    "openai_responses": "openai-responses",
}


def resolve_provider_name(name: str) -> str:
    """The canonical provider name, or a ProviderConfigError listing the valid ones."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in PROVIDERS:
        close = difflib.get_close_matches(key, [*PROVIDER_NAMES, *_ALIASES], n=1)
        hint = f"did you mean {_ALIASES.get(close[0], close[0])!r}? " if close else ""
        raise ProviderConfigError(
            f"unknown provider {name!r}; {hint}choose one of: {', '.join(PROVIDER_NAMES)}"
        )
    return key


def _env_value(env: Mapping[str, str], name: str | None) -> str | None:
    if not name:
        return None
    value = env.get(name, "").strip()
    return value or None


def ollama_base_url(host: str) -> str:
    """OLLAMA_HOST as an http URL, read the way Ollama reads it: without a scheme the port
    defaults to 11434 ("0.0.0.0", "localhost:11434"); with one, to the scheme's own."""
    host = host.strip().rstrip("/")
    if "://" in host:
        return host
    authority, slash, path = host.partition("/")
    if ":" not in authority:
        authority += ":11434"
    return f"http://{authority}{slash}{path}"


def compat_base_url(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """The base URL of the OpenAI-compatible server `name` from its env var or default."""
    return _compat_base_url(PROFILES[name], os.environ if env is None else env)


def _compat_base_url(profile: CompatProfile, env: Mapping[str, str]) -> str | None:
    from_env = _env_value(env, profile.base_url_env)
    if from_env is None:
        return profile.default_base_url
    if profile.name == "ollama":
        from_env = ollama_base_url(from_env)
    suffix = profile.base_url_suffix
    if suffix and not from_env.rstrip("/").endswith(suffix):
        from_env = from_env.rstrip("/") + suffix
    return from_env


def _require_key(info: ProviderInfo, given: str | None, env: Mapping[str, str]) -> str | None:
    key = given or _env_value(env, info.api_key_env)
    if key is None and info.api_key_required and info.api_key_env:
        raise MissingApiKey(
            f"no API key: set {info.api_key_env} in the environment",
            provider=info.name,
            env_var=info.api_key_env,
        )
    return key


def check_provider(
    name: str, base_url: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    """What `create_provider` would refuse, without building anything or importing an SDK
    (`gosling batch` checks its options before any task runs): the name, the key, the base
    URL's shape. Returns the canonical name."""
    from urllib.parse import urlparse

    canonical = resolve_provider_name(name)
    _require_key(PROVIDERS[canonical], None, os.environ if env is None else env)
    if base_url is not None:
        parsed = urlparse(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ProviderConfigError(
                f"base URL {base_url!r} is not an http(s) URL; use e.g. http://localhost:8000/v1",
                provider=canonical,
            )
    return canonical


def create_provider(
    name: str,
    model: str | None = None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    context_limit: int | None = None,
    max_output_tokens: int | None = None,
    temperature: float | None = None,
    fast_model: str | None = None,
    model_limits: Mapping[str, int | ModelLimits] | None = None,
    thinking: int | Literal["adaptive"] | None = None,
    reasoning_effort: str | None = None,
    retry: RetryPolicy | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
    deadlines: CallDeadlines | None = None,
) -> Provider:
    """Build the provider called `name` (see PROVIDER_NAMES) for `model`.

    `context_limit` (a flag) and `model_limits` (config: model name -> limit) beat the
    registry; `env` replaces `os.environ` (tests). No network call happens here.
    """
    canonical = resolve_provider_name(name)
    info = PROVIDERS[canonical]
    environ = os.environ if env is None else env
    chosen_model = model or info.default_model
    if not chosen_model:
        raise ProviderConfigError(
            f"{canonical} has no default model; choose one with --model (or `model` in config)",
            provider=canonical,
        )
    limits = lookup_model(chosen_model, model_limits)
    config = ModelConfig(
        model=chosen_model,
        context_limit=context_limit or limits.context_limit,
        max_output_tokens=max_output_tokens
        or (limits.max_output_tokens if limits.source == "config" else None),
        temperature=temperature,
        fast_model=fast_model,
    )
    key = _require_key(info, api_key, environ)

    if canonical == "anthropic":
        from gosling.providers.anthropic import AnthropicProvider

        url = base_url or _env_value(environ, info.base_url_env) or info.default_base_url
        assert url is not None and key is not None
        return AnthropicProvider(
            config,
            api_key=key,
            base_url=url,
            thinking=thinking,
            retry=retry,
            timeout=timeout,
            deadlines=deadlines,
        )

    if canonical in ("openai", "openai-responses"):
        url = base_url or _env_value(environ, info.base_url_env) or info.default_base_url
        assert url is not None and key is not None
        if canonical == "openai":
            from gosling.providers.openai_chat import OpenAIChatProvider

            return OpenAIChatProvider(
                config, api_key=key, base_url=url, retry=retry, timeout=timeout, deadlines=deadlines
            )
        from gosling.providers.openai_responses import OpenAIResponsesProvider

        return OpenAIResponsesProvider(
            config,
            api_key=key,
            base_url=url,
            reasoning_effort=reasoning_effort,
            retry=retry,
            timeout=timeout,
            deadlines=deadlines,
        )

    from gosling.providers.openai_compatible import OpenAICompatibleProvider

    profile = PROFILES[canonical]
    url = base_url or _compat_base_url(profile, environ)
    if not url:
        where = f" or set {profile.base_url_env}" if profile.base_url_env else ""
        raise ProviderConfigError(
            f"{canonical} needs the server's base URL: pass --base-url{where}", provider=canonical
        )
    return OpenAICompatibleProvider(
        config,
        profile=profile,
        base_url=url,
        api_key=key,
        retry=retry,
        timeout=timeout,
        deadlines=deadlines,
    )
