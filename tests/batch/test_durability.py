"""What a batch promises across crashes and Ctrl-C: a result line cut short by a crash is not a
result, a recorded line is on the disk before the next task is told it is done, a task cut
short by the user's cancel is neither retried nor recorded as failed, and the workers are
reused from task to task."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from gosling.batch.results import OutputDir
from gosling.batch.scheduler import Finished, Lost
from tests.batch.helpers import gosling_batch, write_tasks
from tests.batch.test_scheduler import FakeBackend, outcome, recorded, scheduler, tasks
from tests.fakes import FakeLLMServer, Turn


def test_a_result_line_cut_short_by_a_crash_is_dropped_and_its_task_runs_again(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    whole = json.dumps({"task_id": "one", "exit_code": 0}) + "\n"
    (out / "results.jsonl").write_text(whole + '{"task_id": "two", "exit_co')
    backend = FakeBackend(1, lambda job: Finished(job, outcome(job)))

    summary = scheduler(tmp_path, backend, tasks(("one", None), ("two", None))).run()

    assert [j.task.id for j in backend.submitted] == ["two"]
    assert (summary.skipped, summary.succeeded, summary.exit_code) == (1, 2, 0)
    lines = (out / "results.jsonl").read_text().splitlines()
    assert [json.loads(line)["task_id"] for line in lines] == ["one", "two"]


def test_blank_lines_in_the_results_hide_no_result_after_them(tmp_path: Path) -> None:
    """A results file edited by hand (a failed line deleted, leaving it blank) still counts
    every task after the blank line as done: none of them runs, or pays, a second time."""
    out = tmp_path / "out"
    out.mkdir()
    line = {task: json.dumps({"task_id": task, "exit_code": 0}) + "\n" for task in "abc"}
    (out / "results.jsonl").write_text(line["a"] + "\n" + line["b"] + "   \n" + line["c"])
    backend = FakeBackend(1, lambda job: Finished(job, outcome(job)))

    summary = scheduler(tmp_path, backend, tasks(*((t, None) for t in "abcd"))).run()

    assert [j.task.id for j in backend.submitted] == ["d"]
    assert (summary.skipped, summary.exit_code) == (3, 0)


def test_a_damaged_result_line_is_named_by_its_number_and_nothing_runs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    good = json.dumps({"task_id": "one", "exit_code": 0}) + "\n"
    (out / "results.jsonl").write_text(good + "{not json}\n" + good)
    backend = FakeBackend(1, lambda job: Finished(job, outcome(job)))

    with pytest.raises(ValueError, match=r"results\.jsonl:2: not a result line") as raised:
        scheduler(tmp_path, backend, tasks(("one", None), ("two", None))).run()

    assert "move the file away to start the batch over" in str(raised.value)
    assert backend.submitted == []
    assert (out / "results.jsonl").read_text() == good + "{not json}\n" + good


def test_a_result_line_is_synced_before_the_task_counts_as_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A power cut after `record` returns must not lose the line: a rerun would do the task
    (and spend its tokens) a second time."""
    out = OutputDir(tmp_path / "out")
    out.root.mkdir()
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}") == str(out.results_path):
            synced.append(out.results_path.read_text())
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    line = out.record("t1", {"task_id": "t1", "exit_code": 0}, None, "log")
    assert synced == [json.dumps(line) + "\n"]


@pytest.mark.parametrize("retries", [0, 2])
def test_tasks_lost_to_the_second_ctrl_c_are_cancelled_not_retried_or_failed(
    tmp_path: Path, retries: int
) -> None:
    """A worker stopped by our own cancel reports its task lost; that task must run on the
    next `gosling batch`, so it is neither retried now nor recorded as a failure."""
    backend = FakeBackend(2, lambda job: Lost(job, "worker process died"))
    todo = tasks(("one", None), ("two", None), ("three", None))
    run = scheduler(tmp_path, backend, todo, retries=retries)

    def twice() -> None:
        run.interrupt()
        run.interrupt()

    backend.on_poll = twice
    summary = run.run()

    assert recorded(tmp_path) == []
    assert Counter(j.task.id for j in backend.submitted) == {"one": 1, "two": 1}
    assert (summary.cancelled, summary.retries, summary.failed) == (3, 0, 0)
    assert summary.exit_code == 130


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.mark.timeout(600)
def test_one_worker_runs_task_after_task(tmp_path: Path, server: FakeLLMServer) -> None:
    """`--workers 1` means one process: a pool that starts a fresh worker for each task pays
    the start-up every time and leaves the idle ones running."""
    parents = tmp_path / "parents"
    todo = []
    for n in range(3):
        server.add_conversation(f"[t{n}]", Turn(text=f"done {n}"))
        # The setup runs in a child of the worker: $PPID is the worker process.
        todo.append({"id": f"t{n}", "prompt": f"[t{n}] go", "setup": f"echo $PPID >> {parents}"})
    task_file = write_tasks(tmp_path / "tasks.jsonl", todo)

    run = gosling_batch(task_file, tmp_path / "out", server, "--workers", "1")

    assert run.returncode == 0, run.stderr
    workers = parents.read_text().split()
    assert len(workers) == 3 and len(set(workers)) == 1
    (log,) = (tmp_path / "out").rglob("workers.log")  # what the workers printed: private
    assert log.stat().st_mode & 0o777 == 0o600


def test_retry_failed_forgets_exactly_the_failed_tasks(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    codes = {"ok": 0, "broke": 1, "stopped": 130, "ok2": 0}
    lines = [{"task_id": task, "exit_code": code} for task, code in codes.items()]
    (out / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))

    dropped = OutputDir(out).forget_failed()

    assert sorted(dropped) == ["broke", "stopped"]  # what `--retry-failed` says it reruns
    assert sorted(OutputDir(out).finished()) == ["ok", "ok2"]
