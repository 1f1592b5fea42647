"""Pytest fixtures for the fake LLM server. Import them into a conftest.py to use them:

from tests.fakes.fixtures import fake_llm, no_wait_retry  # noqa: F401
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from gosling.providers.retry import RetryPolicy
from tests.fakes.llm_server import FakeLLMServer


@dataclass
class SleepRecorder:
    """A `sleep` for RetryPolicy that records the waits instead of waiting."""

    delays: list[float] = field(default_factory=list)

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    """A running fake server with an empty script; add turns with `fake_llm.add(...)`."""
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def no_wait_retry(sleeps: SleepRecorder) -> RetryPolicy:
    """The default retry policy (3 retries) with recorded, instant sleeps and no jitter."""
    return RetryPolicy(sleep=sleeps, rng=lambda: 0.0)
