"""Fixtures for the session store tests: a fresh store, and helper processes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gosling.sessions import SqliteSessionStore

ROOT = Path(__file__).resolve().parents[2]

Spawn = Callable[..., "subprocess.Popen[str]"]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "sessions.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[SqliteSessionStore]:
    with SqliteSessionStore(db_path) as opened:
        yield opened


@pytest.fixture
def spawn() -> Iterator[Spawn]:
    """Start `tests/sessions/writer_process.py` with the given arguments; kill leftovers."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> subprocess.Popen[str]:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.sessions.writer_process", *args],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None and not stream.closed:
                stream.close()
