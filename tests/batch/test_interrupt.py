"""Ctrl-C on a running `gosling batch` (sent to its whole process group, as a terminal
does): the first lets the running task finish and starts nothing new, the second cancels;
either way what finished is kept and a rerun does the rest."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.batch.helpers import (
    blocking_tasks,
    ctrl_c_twice,
    gosling_batch,
    results,
    running_batch,
    wait_for,
)
from tests.fakes import FakeLLMServer

pytestmark = pytest.mark.timeout(600)  # whole `gosling batch` runs; slow on a loaded box


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def test_first_ctrl_c_lets_the_running_task_finish(tmp_path: Path, server: FakeLLMServer) -> None:
    started, release = blocking_tasks(server, tmp_path)
    out = tmp_path / "out"
    with running_batch(tmp_path / "tasks.jsonl", out, server, release) as batch:
        wait_for(started, batch)

        os.killpg(batch.pid, signal.SIGINT)
        release.touch()
        _, stderr = batch.communicate(timeout=120)

    assert batch.returncode == 130, stderr
    assert "stopping" in stderr
    done = results(out)
    assert list(done) == ["block"]
    assert (done["block"]["exit_code"], done["block"]["result"]) == (0, "Released.")
    rerun = gosling_batch(tmp_path / "tasks.jsonl", out, server, "--workers", "1")
    assert rerun.returncode == 0, rerun.stderr
    assert sorted(results(out)) == ["block", "later-1", "later-2"]


def test_second_ctrl_c_cancels_the_running_task_and_keeps_nothing_half_done(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    started, release = blocking_tasks(server, tmp_path)
    out = tmp_path / "out"
    with running_batch(tmp_path / "tasks.jsonl", out, server, release) as batch:
        wait_for(started, batch)

        stderr = ctrl_c_twice(batch)

    assert batch.returncode == 130, stderr
    assert "cancelling 1 running task" in stderr
    assert not (out / "results.jsonl").exists() or results(out) == {}
    rerun = gosling_batch(tmp_path / "tasks.jsonl", out, server, "--workers", "1")
    assert rerun.returncode == 0, rerun.stderr
    assert results(out)["block"]["result"] == "Released."
