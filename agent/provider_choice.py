"""Which provider a run uses, without surprises.

An explicit choice (flag or config) always wins. Otherwise: `ANTHROPIC_API_KEY`, else
`OPENAI_API_KEY`, else an Ollama server at `OLLAMA_HOST` (default localhost:11434) if it
answers within half a second. With none of those the run stops with a message listing the
three ways to fix it.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping

from gosling.agent.config import Settings
from gosling.providers import Provider, ProviderError
from gosling.providers.deadlines import CallDeadlines
from gosling.providers.errors import ProviderConfigError
from gosling.providers.factory import (
    PROVIDERS,
    compat_base_url,
    create_provider,
    ollama_base_url,
    resolve_provider_name,
)
from gosling.providers.pricing import ModelPrice
from gosling.providers.prompt_cache import PromptCache, PromptCacheOverride, prompt_cache_for
from gosling.providers.registry import ModelLimits, lookup_model
from gosling.providers.retry import RetryPolicy
from gosling.providers.server_window import PROBED_PROVIDERS, ServerWindow, probe_server_window

OLLAMA_PROBE_TIMEOUT = 0.5
NO_PROVIDER_MESSAGE = """\
No model provider found. Do one of:
  - set ANTHROPIC_API_KEY to use Anthropic;
  - set OPENAI_API_KEY to use OpenAI (OPENAI_BASE_URL for a compatible server);
  - run a model on this machine, for example:
      Ollama     install it (https://ollama.com/download), then
                   ollama pull qwen3                 # a model that can call tools
                   gosling run --provider ollama --model qwen3 -t "your task"
      llama.cpp  llama-server -m MODEL.gguf --jinja -c 32768 --port 8080
                   gosling run --provider llamacpp --model MODEL -t "your task"
      LM Studio  load a model and start its server (lms server start), then
                   gosling run --provider lmstudio --model MODEL -t "your task"
or choose one explicitly with --provider/--model (or `provider` in config).
Without any model, `gosling context demo` shows the context pipeline on a recorded session."""


class NoProviderFound(ProviderError):
    """Nothing was configured and nothing could be found."""


OllamaProbe = Callable[[str], list[str] | None]
WindowProbe = Callable[[str, str, str], ServerWindow | None]


def probe_ollama(base_url: str) -> list[str] | None:
    """Model names of the Ollama server at `base_url`, or None when it does not answer."""
    root = base_url.removesuffix("/v1").rstrip("/")
    try:
        with urllib.request.urlopen(f"{root}/api/tags", timeout=OLLAMA_PROBE_TIMEOUT) as reply:
            data = json.loads(reply.read().decode("utf-8"))
    except (OSError, urllib.error.URLError, ValueError):
        return None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, list):
        return []
    return [str(m.get("name")) for m in models if isinstance(m, dict) and m.get("name")]


def model_prices(settings: Settings) -> dict[str, ModelPrice]:
    """Prices declared in config, by model name."""
    return {name: o.price for name, o in settings.models.items() if o.price is not None}


def model_prompt_cache(settings: Settings, model: str, provider: str | None) -> PromptCache:
    """The cost model of `model`'s prompt cache, with the config's price and cache override."""
    override = next(
        (
            o.cache
            for name, o in settings.models.items()
            if name.strip().lower() == model.strip().lower()
        ),
        None,
    )
    if settings.prompt_cache is not None and (override is None or override.family is None):
        family = PromptCacheOverride(family=settings.prompt_cache)
        override = (
            override.model_copy(update={"family": settings.prompt_cache}) if override else family
        )
    return prompt_cache_for(model, provider, prices=model_prices(settings), override=override)


def configured_model_limits(settings: Settings) -> dict[str, int | ModelLimits]:
    """The `[models."..."]` limits of `settings`, as `lookup_model` takes them."""
    limits: dict[str, int | ModelLimits] = {}
    for name, override in settings.models.items():
        if override.context_limit is None:
            continue
        if override.max_output_tokens is None:
            limits[name] = override.context_limit
        else:
            limits[name] = ModelLimits(override.context_limit, override.max_output_tokens, "config")
    return limits


def choose_provider(
    settings: Settings,
    *,
    env: Mapping[str, str] | None = None,
    probe: OllamaProbe = probe_ollama,
    window_probe: WindowProbe = probe_server_window,
    retry: RetryPolicy | None = None,
) -> Provider:
    """Build the provider the settings and environment ask for."""
    environ = os.environ if env is None else env
    name = settings.provider
    model = settings.model
    if name is None:
        name = _vendor_of_model(model, environ)
    elif (mismatch := _other_vendors_model(name, model)) is not None:
        raise ProviderConfigError(mismatch)
    if name is None:
        if environ.get("ANTHROPIC_API_KEY"):
            name = "anthropic"
        elif environ.get("OPENAI_API_KEY"):
            name = "openai"
        else:
            url = ollama_base_url(environ.get("OLLAMA_HOST") or "localhost:11434")
            models = probe(url)
            if models is None:
                raise NoProviderFound(NO_PROVIDER_MESSAGE)
            if model is None and not models:
                raise NoProviderFound(
                    f"Ollama at {url} has no models; pull one (`ollama pull qwen3`) or pass --model"
                )
            name, model = "ollama", model or models[0]
    limits = configured_model_limits(settings)
    window = _server_window(name, model, settings, limits, environ, window_probe)
    if window is not None:
        limits[window[0]] = ModelLimits(window[1].tokens, None, "server", window[1].source)
    return create_provider(
        name,
        model,
        base_url=settings.base_url,
        context_limit=settings.context_limit,
        max_output_tokens=settings.max_output_tokens,
        temperature=settings.temperature,
        fast_model=settings.fast_model,
        model_limits=limits,
        retry=retry or RetryPolicy(max_retries=settings.max_retries),
        env=environ,
        deadlines=CallDeadlines(settings.request_timeout, settings.first_byte_timeout),
    )


_VENDOR_KEYS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def _vendor_of_model(model: str | None, environ: Mapping[str, str]) -> str | None:
    """With no provider named, a first-party model name picks its own vendor (`--model
    gpt-5` goes to OpenAI even when an Anthropic key is set too). None: decide as before."""
    from gosling.providers.model_family import model_vendor

    vendor = model_vendor(model)
    if vendor is None:
        return None
    if environ.get(_VENDOR_KEYS[vendor]):
        return vendor
    if any(environ.get(key) for key in _VENDOR_KEYS.values()):
        raise ProviderConfigError(
            f"{model} is {'an OpenAI' if vendor == 'openai' else 'an Anthropic'} model but "
            f"{_VENDOR_KEYS[vendor]} is not set; set it, or pass --provider NAME for a proxy "
            "or compatible server that serves it"
        )
    return None


def model_mismatch_for(
    provider: str | None, model: str | None, environ: Mapping[str, str]
) -> str | None:
    """Why `model` cannot go to `provider` (or, with no provider named, to the vendor the
    keys would pick), or None; `choose_provider` raises the same sentence."""
    try:
        if provider is None:
            _vendor_of_model(model, environ)
            return None
    except ProviderConfigError as exc:
        return str(exc)
    return _other_vendors_model(provider, model)


def _other_vendors_model(provider: str, model: str | None) -> str | None:
    """Why `model` belongs to the other first-party vendor than `provider`, or None. Names
    no vendor claims (local models, `test-model`) pass: only a sure mismatch is refused."""
    from gosling.providers.model_family import model_mismatch, model_vendor

    if model is None or model_vendor(model) is None:
        return None
    return model_mismatch(provider, model)


def _server_window(
    name: str,
    model: str | None,
    settings: Settings,
    declared: Mapping[str, int | ModelLimits],
    environ: Mapping[str, str],
    probe: WindowProbe,
) -> tuple[str, ServerWindow] | None:
    """The window a local server reports for the model, unless config or a flag declares one
    (a declared limit always wins)."""
    canonical = resolve_provider_name(name)
    chosen = model or PROVIDERS[canonical].default_model
    if canonical not in PROBED_PROVIDERS or chosen is None or settings.context_limit:
        return None
    if any(key.strip().lower() == chosen.strip().lower() for key in declared):
        return None
    url = settings.base_url or compat_base_url(canonical, environ)
    if url is None:
        return None
    window = probe(canonical, url, chosen)
    return (chosen, window) if window is not None else None


def describe_choice(settings: Settings, provider: Provider, env: Mapping[str, str]) -> str:
    """Why this provider: the setting that named it, or the key or server that was found."""
    if settings.provider is not None:
        return "the provider setting"
    if env.get("ANTHROPIC_API_KEY"):
        return "ANTHROPIC_API_KEY is set"
    if env.get("OPENAI_API_KEY"):
        return "OPENAI_API_KEY is set"
    return f"an Ollama server answered ({provider.name})"


def describe_effective(
    settings: Settings,
    provider: Provider,
    env: Mapping[str, str],
    sources: Mapping[str, str] | None = None,
) -> list[tuple[str, str, str]]:
    """(what, value, why) for the provider, model and context window a run would use, for
    `gosling config provider` and `gosling config show`. `sources` says where each setting
    came from (`load_settings(...).sources`)."""
    where = sources or {}
    config = provider.model_config
    if settings.model is not None:
        model_why = f"the model setting ({where.get('model', 'config')})"
    elif settings.provider is None and provider.name == "ollama":
        model_why = "the first model the Ollama server lists"
    else:
        model_why = f"{provider.name}'s default model"
    if settings.context_limit:
        window_why = f"the context_limit setting ({where.get('context_limit', 'config')})"
    else:
        limits = lookup_model(config.model, configured_model_limits(settings))
        if limits.source == "config":
            window_why = f'[models."{limits.matched}"] context_limit in config'
        elif limits.context_limit != config.context_limit:
            window_why = "reported by the server"
        elif limits.source == "registry":
            window_why = f"model registry ({limits.matched})"
        else:
            window_why = "unknown model: the default; declare context_limit in config"
    provider_why = describe_choice(settings, provider, env)
    if settings.provider is not None and "provider" in where:
        provider_why += f" ({where['provider']})"
    rows = [
        ("provider", provider.name, provider_why),
        ("model", config.model, model_why),
        ("context window", f"{config.context_limit:,} tokens", window_why),
    ]
    base_url = getattr(provider, "base_url", None)
    if isinstance(base_url, str):
        rows.append(("base URL", base_url, _base_url_why(settings, provider.name, env, where)))
    return rows


def _base_url_why(
    settings: Settings, provider: str, env: Mapping[str, str], where: Mapping[str, str]
) -> str:
    from gosling.providers.factory import PROVIDERS
    from gosling.providers.openai_compatible import PROFILES

    if settings.base_url is not None:
        return f"the base_url setting ({where.get('base_url', 'config')})"
    info = PROVIDERS.get(provider)
    profile = PROFILES.get(provider)
    variable = (info.base_url_env if info else None) or (profile.base_url_env if profile else None)
    if variable and env.get(variable):
        return f"${variable}"
    return f"{provider}'s default"
