"""Fixtures of the interactive tests: a repository to work in and the loopback fake server
(test modules may define their own, with hint files of their own)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes import FakeLLMServer


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    (work / ".git").mkdir(parents=True)
    return work


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("GOSLING_MAX_RETRIES", "0")
    with FakeLLMServer() as fake:
        yield fake
