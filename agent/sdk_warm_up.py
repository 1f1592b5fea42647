"""Importing a provider's SDK in a thread while the run gets ready.

The official SDKs are heavy to import (`anthropic` about 3,500 modules, `openai` about 800).
`warm_up_sdk` starts that import in a daemon thread as soon as the provider is known, so it
proceeds beside loading the config, opening the store, reading hints and building the
tokenizer, and the adapter's own `import` at the first request finds it done or waits for it
(Python's import lock). Standard library only.
"""

from __future__ import annotations

import contextlib
import importlib
import threading

SDK_MODULES = {"anthropic": "anthropic"} | dict.fromkeys(
    (
        "openai",
        "openai-responses",
        "openai-compatible",
        "ollama",
        "vllm",
        "llamacpp",
        "lmstudio",
        "openrouter",
    ),
    "openai",
)
"""The SDK module each provider's adapter imports."""

_started: set[str] = set()
_lock = threading.Lock()


def warm_up_sdk(provider_name: str | None) -> None:
    """Start importing `provider_name`'s SDK in the background (once per process)."""
    module = SDK_MODULES.get(provider_name or "")
    if module is None:
        return
    with _lock:
        if module in _started:
            return
        _started.add(module)
    threading.Thread(target=_import, args=(module,), name=f"{module}-warm-up", daemon=True).start()


def _import(module: str) -> None:
    # A failure is left for the adapter's own import to report where the SDK is used.
    with contextlib.suppress(Exception):
        importlib.import_module(module)
