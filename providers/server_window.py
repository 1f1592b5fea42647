"""Ask a local server how large its context window is.

Local servers often run a model with a window far smaller than the model's own (Ollama's
`num_ctx`, llama.cpp's `--ctx-size`), and a server truncates silently past it, so
compaction that trusts the registry never fires (goose users on Ollama: "auto compact doesn't
work"). Each kind of server says it somewhere else:

- Ollama: `POST /api/show {"model": NAME}`: the `num_ctx` line of `parameters` (what the
  server runs with), else `model_info["<arch>.context_length"]` (what the model supports);
- vLLM: `GET /v1/models`: the model's `max_model_len`;
- llama.cpp: `GET /props`: `default_generation_settings.n_ctx` (or a top-level `n_ctx`);
- LM Studio: `GET /api/v0/models`: the model's `loaded_context_length`, else
  `max_context_length`.

One short request at startup, only for these servers and only when config declares no limit.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger("gosling.providers")

PROBE_TIMEOUT = 1.0
PROBED_PROVIDERS = frozenset({"ollama", "vllm", "llamacpp", "lmstudio"})


@dataclass(frozen=True)
class ServerWindow:
    """A context window a server reported, and where it said so (for `config show`)."""

    tokens: int
    source: str


def _root(base_url: str) -> str:
    return base_url.rstrip("/").removesuffix("/v1")


def _fetch(url: str, body: dict[str, Any] | None, timeout: float) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method="POST" if data else "GET")
    if data:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        return json.loads(reply.read().decode("utf-8"))


def _positive(value: Any) -> int | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit() and int(value) > 0:
        return int(value)
    return None


def _ollama(reply: Any) -> ServerWindow | None:
    if not isinstance(reply, dict):
        return None
    parameters = reply.get("parameters")
    if isinstance(parameters, str):
        for line in parameters.splitlines():
            name, _, value = line.strip().partition(" ")
            tokens = _positive(value.strip()) if name == "num_ctx" else None
            if tokens:
                return ServerWindow(tokens, "ollama /api/show num_ctx")
    info = reply.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            tokens = _positive(value) if str(key).endswith(".context_length") else None
            if tokens:
                return ServerWindow(tokens, f"ollama /api/show {key}")
    return None


def _model_entry(reply: Any, model: str) -> dict[str, Any] | None:
    entries = reply.get("data") if isinstance(reply, dict) else None
    if not isinstance(entries, list):
        return None
    dicts = [e for e in entries if isinstance(e, dict)]
    for entry in dicts:
        if entry.get("id") == model:
            return entry
    return dicts[0] if len(dicts) == 1 else None


def _vllm(reply: Any, model: str) -> ServerWindow | None:
    entry = _model_entry(reply, model)
    tokens = _positive(entry.get("max_model_len")) if entry else None
    return ServerWindow(tokens, "vllm /v1/models max_model_len") if tokens else None


def _llamacpp(reply: Any) -> ServerWindow | None:
    if not isinstance(reply, dict):
        return None
    settings = reply.get("default_generation_settings")
    nested = settings.get("n_ctx") if isinstance(settings, dict) else None
    tokens = _positive(nested) or _positive(reply.get("n_ctx"))
    return ServerWindow(tokens, "llama.cpp /props n_ctx") if tokens else None


def _lmstudio(reply: Any, model: str) -> ServerWindow | None:
    entry = _model_entry(reply, model)
    if entry is None:
        return None
    for key in ("loaded_context_length", "max_context_length"):
        tokens = _positive(entry.get(key))
        if tokens:
            return ServerWindow(tokens, f"lmstudio /api/v0/models {key}")
    return None


def probe_server_window(
    provider: str, base_url: str, model: str, *, timeout: float = PROBE_TIMEOUT
) -> ServerWindow | None:
    """The window the server at `base_url` runs `model` with, or None when it does not say
    (or does not answer: the caller keeps the registry's figure and its warning)."""
    root = _root(base_url)
    try:
        if provider == "ollama":
            return _ollama(_fetch(f"{root}/api/show", {"model": model}, timeout))
        if provider == "vllm":
            return _vllm(_fetch(f"{root}/v1/models", None, timeout), model)
        if provider == "llamacpp":
            return _llamacpp(_fetch(f"{root}/props", None, timeout))
        if provider == "lmstudio":
            return _lmstudio(_fetch(f"{root}/api/v0/models", None, timeout), model)
    except (OSError, urllib.error.URLError, ValueError) as exc:
        logger.info("%s at %s did not report its context window: %s", provider, root, exc)
    return None
