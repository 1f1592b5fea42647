"""Ctrl-C on a running `gosling batch` (sent to its whole process group, as a terminal
does): the first lets the running task finish and starts nothing new, the second cancels;
either way what finished is kept and a rerun does the rest."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.batch.helpers import REPO, batch_env, gosling_batch, results, tool, write_tasks
from tests.fakes import FakeLLMServer, Turn

pytestmark = pytest.mark.timeout(600)  # whole `gosling batch` runs; slow on a loaded box


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while not path.exists():
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def start_batch(tasks: Path, out: Path, server: FakeLLMServer) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "agent.cli", "batch", str(tasks), "-o", str(out)]
    command += ["--provider", "anthropic", "--model", "m", "--base-url", server.url]
    command += ["--workers", "1"]
    return subprocess.Popen(
        command,
        cwd=REPO,
        env=batch_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


@contextmanager
def running_batch(
    tasks: Path, out: Path, server: FakeLLMServer, release: Path
) -> Iterator[subprocess.Popen[str]]:
    """The batch, and on the way out nothing left blocked or running."""
    batch = start_batch(tasks, out, server)
    try:
        yield batch
    finally:
        (release.parent.parent.parent.parent / "released-all").touch()
        if release.parent.exists():
            release.touch()
        if batch.poll() is None:
            os.killpg(batch.pid, signal.SIGKILL)
        batch.communicate()


def read_until(batch: subprocess.Popen[str], text: str) -> str:
    assert batch.stderr is not None
    seen = ""
    while text not in seen:
        line = batch.stderr.readline()
        assert line, f"the batch ended before saying {text!r}: {seen}"
        seen += line
    return seen


def blocking_tasks(server: FakeLLMServer, tmp_path: Path) -> tuple[Path, Path]:
    """The `block` task's tool waits for a file; both files are in its working directory,
    the one place its sandboxed command can write and the test can see. Its setup (not
    sandboxed) makes a rerun's fresh directory released from the start once `released-all`
    exists."""
    work = tmp_path / "out" / "work" / "block"
    started, release = work / "started", work / "release"
    wait = "touch started; while [ ! -e release ]; do sleep 0.05; done; echo released"
    release_all = tmp_path / "released-all"
    server.add_conversation(
        "[block]", tool("developer__shell", command=wait), Turn(text="Released.")
    )
    server.add_conversation("[later]", Turn(text="Later."))
    tasks = [
        {
            "id": "block",
            "prompt": "[block] wait",
            "setup": f"if [ -e {release_all} ]; then touch release; fi",
        },
        {"id": "later-1", "prompt": "[later] one"},
        {"id": "later-2", "prompt": "[later] two"},
    ]
    write_tasks(tmp_path / "tasks.jsonl", tasks)
    return started, release


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
    assert (done["block"]["exit_code"], done["block"]["final_text"]) == (0, "Released.")
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

        os.killpg(batch.pid, signal.SIGINT)
        said = read_until(batch, "Ctrl-C again cancels them")
        os.killpg(batch.pid, signal.SIGINT)
        _, stderr = batch.communicate(timeout=120)

    assert batch.returncode == 130, said + stderr
    assert "cancelling 1 running task" in stderr
    assert not (out / "results.jsonl").exists() or results(out) == {}
    rerun = gosling_batch(tmp_path / "tasks.jsonl", out, server, "--workers", "1")
    assert rerun.returncode == 0, rerun.stderr
    assert results(out)["block"]["final_text"] == "Released."
