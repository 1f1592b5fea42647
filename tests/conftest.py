"""Guard rails for every test: a private GOSLING_HOME, no network beyond loopback, and
property tests that draw the same examples on every run and every machine."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tests.fakes.fixtures import fake_llm, no_wait_retry, sleeps  # noqa: F401  (shared fixtures)

# Seeded per test (from its name), with no example database: a property test fails on every
# machine or on none, whatever ran before it. `HYPOTHESIS_PROFILE=explore` draws fresh
# examples (and keeps the failing ones in .hypothesis/) when hunting for new bugs.
settings.register_profile("seeded", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "seeded"))

_real_connect = socket.socket.connect


def _is_loopback(address: Any) -> bool:
    if isinstance(address, str | bytes):  # AF_UNIX path
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if not _is_loopback(address):
        raise RuntimeError(f"tests may not touch the network (tried to connect to {address!r})")
    _real_connect(self, address)


@pytest.fixture(autouse=True, scope="session")
def _session_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private GOSLING_HOME for fixtures wider than one test (they run before the
    per-test one below), so nothing ever reaches the real home directory."""
    import os

    home = tmp_path_factory.mktemp("gosling_session_home")
    previous = os.environ.get("GOSLING_HOME")
    os.environ["GOSLING_HOME"] = str(home)
    yield home
    if previous is None:
        os.environ.pop("GOSLING_HOME", None)
    else:
        os.environ["GOSLING_HOME"] = previous


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("gosling_home")
    monkeypatch.setenv("GOSLING_HOME", str(home))
    monkeypatch.setenv("GOSLING_TESTING", "1")
    for var in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENROUTER_API_KEY",
        "OLLAMA_HOST",
        "VLLM_BASE_URL",
        "VLLM_API_KEY",
        "LLAMACPP_BASE_URL",
        "LLAMACPP_API_KEY",
        "LMSTUDIO_BASE_URL",
        "NO_COLOR",
    ):
        monkeypatch.delenv(var, raising=False)
    for var in list(__import__("os").environ):
        if var.startswith("GOSLING_") and var not in ("GOSLING_HOME", "GOSLING_TESTING"):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    import gosling.prompts.templating

    # the command line opts into the user's prompt overrides process-wide; each test starts
    # without them, as a library caller does
    monkeypatch.setattr(gosling.prompts.templating, "_override_dir", None)
    yield home
