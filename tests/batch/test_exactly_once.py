"""Each task runs once, whatever happens to the driver: a SIGKILLed driver takes its workers
(and their tool commands) with it, so the rerun is the only run of the unfinished tasks,
and a second driver on the same output directory refuses to start."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.sandbox.conditions import needs_bwrap
from tests.agent.tools.processes import is_running, wait_until_sync
from tests.batch.helpers import (
    REPO,
    batch_env,
    gosling_batch,
    results,
    running_batch,
    tool,
    wait_for,
    write_tasks,
)
from tests.fakes import FakeLLMServer, Turn

pytestmark = pytest.mark.timeout(600)  # whole `gosling batch` runs; slow on a loaded box


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def looping_tasks(server: FakeLLMServer, tmp_path: Path) -> tuple[Path, Path, Path]:
    """Two tasks whose tool command writes its pid to `<task dir>/pid` and then waits for
    `<task dir>/release`, which a rerun's setup creates once `released-all` exists."""
    wait = "echo $$ > pid; while [ ! -e release ]; do sleep 0.05; done; echo released"
    release_all = tmp_path / "released-all"
    for name in ("one", "two"):
        server.add_conversation(
            f"[{name}]", tool("developer__shell", command=wait), Turn(text="Released.")
        )
    tasks = [
        {
            "id": name,
            "prompt": f"[{name}] wait",
            "setup": f"if [ -e {release_all} ]; then touch release; fi",
        }
        for name in ("one", "two")
    ]
    write_tasks(tmp_path / "tasks.jsonl", tasks)
    work = tmp_path / "out" / "work"
    return work / "one", work / "two", release_all


def host_pid(sandboxed: Path) -> int:
    """The host pid of the shell whose pid (inside its sandbox) `sandboxed` holds: the
    process of `bash -c` whose working directory is that task's directory."""
    inner = int(sandboxed.read_text())
    task_dir = sandboxed.parent
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(entry.path, "status").read_text()
            cwd = Path(os.readlink(Path(entry.path, "cwd")))
        except OSError:
            continue
        nspid = status.split("NSpid:")[1].split("\n")[0].split()
        if cwd == task_dir and nspid[-1] == str(inner):
            return int(entry.name)
    raise AssertionError(f"no process runs the command of {task_dir}")


def test_a_sigkilled_driver_leaves_no_worker_running_and_the_rerun_runs_each_task_once(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    one, two, release_all = looping_tasks(server, tmp_path)
    out = tmp_path / "out"
    tasks = tmp_path / "tasks.jsonl"
    with running_batch(tasks, out, server, one / "release", "--workers", "2") as batch:
        for task in (one, two):
            wait_for(task / "pid", batch)
        commands = [host_pid(one / "pid"), host_pid(two / "pid")]
        os.kill(batch.pid, signal.SIGKILL)
        try:
            wait_until_sync(lambda: not any(is_running(p) for p in commands), within=60)
        finally:
            for pid in commands:  # on failure, leave nothing of ours running
                if is_running(pid):
                    os.kill(pid, signal.SIGKILL)
    assert not (out / "results.jsonl").exists() or results(out) == {}
    release_all.touch()
    rerun = gosling_batch(tmp_path / "tasks.jsonl", out, server, "--workers", "2")
    assert rerun.returncode == 0, rerun.stderr
    done = results(out)
    assert sorted(done) == ["one", "two"]
    assert all(r["result"] == "Released." and r["attempts"] == 1 for r in done.values())


def test_a_second_driver_on_the_same_output_directory_exits_2(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    one, two, release_all = looping_tasks(server, tmp_path)
    out = tmp_path / "out"
    tasks = tmp_path / "tasks.jsonl"
    with running_batch(tasks, out, server, one / "release", "--workers", "2") as first:
        wait_for(one / "pid", first)
        command = [sys.executable, "-m", "gosling", "batch", str(tasks), "-o", str(out)]
        command += ["--provider", "anthropic", "--model", "m", "--base-url", server.url]
        try:
            second = subprocess.run(
                command, cwd=REPO, env=batch_env(), capture_output=True, text=True, timeout=120
            )
        except subprocess.TimeoutExpired:
            second = None
        finally:
            release_all.touch()
            for task in (one, two):
                if task.is_dir():
                    (task / "release").touch()
        assert second is not None, "the second driver ran the tasks too"
        assert second.returncode == 2, second.stderr
        assert "in use by another gosling batch" in second.stderr
        assert f"pid {first.pid}" in second.stderr
        _, stderr = first.communicate(timeout=300)
    assert first.returncode == 0, stderr
    done = results(out)
    assert sorted(done) == ["one", "two"]
    assert all(r["attempts"] == 1 for r in done.values())


@needs_bwrap
def test_a_task_inside_a_git_repository_cannot_write_the_results_or_another_task(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    """OUT_DIR inside a repository: the task's workspace is still its own directory, not
    the repository around it (with results.jsonl, sessions/ and the other tasks)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    out = repo / "out"
    forge = (
        """echo '{"task_id": "forged", "exit_code": 0}' >> ../../results.jsonl; """
        "mkdir -p ../../sessions; echo x > ../../sessions/forged.jsonl; echo x > ../other/pwned"
    )
    server.add_conversation("[forge]", tool("developer__shell", command=forge), Turn(text="Done."))
    server.add_conversation("[other]", Turn(text="Fine."))
    tasks = [{"id": "other", "prompt": "[other] wait"}, {"id": "forge", "prompt": "[forge] go"}]
    write_tasks(tmp_path / "tasks.jsonl", tasks)
    done = gosling_batch(tmp_path / "tasks.jsonl", out, server, "--workers", "1")
    assert done.returncode == 0, done.stderr
    assert sorted(results(out)) == ["forge", "other"]
    assert not (out / "sessions" / "forged.jsonl").exists()
    assert not (out / "work" / "other" / "pwned").exists()
