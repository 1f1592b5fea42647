"""The driver's decisions, against an in-process backend: per-provider concurrency, what a
lost worker means, and the two Ctrl-Cs."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from gosling.batch.progress import PlainProgress
from gosling.batch.results import OutputDir
from gosling.batch.scheduler import Finished, Lost, Scheduler
from gosling.batch.tasks import TaskSpec
from gosling.batch.worker import Job, TaskOutcome, failure_payload


def outcome(job: Job, code: int = 0) -> TaskOutcome:
    payload = {**failure_payload("failed" if code else ""), "error": None if code == 0 else "x"}
    return TaskOutcome(job.task.id, code, payload, None, "")


class FakeBackend:
    """Runs nothing: each poll ends the oldest running job as `decide` says."""

    def __init__(self, slots: int, decide: Callable[[Job], Finished | Lost]) -> None:
        self.slots = slots
        self.decide = decide
        self.running: list[Job] = []
        self.submitted: list[Job] = []
        self.peak: Counter[str] = Counter()
        self.cancelled = False
        self.on_poll: Callable[[], None] = lambda: None

    def submit(self, job: Job) -> None:
        self.running.append(job)
        self.submitted.append(job)
        now = Counter(j.task.provider or "default" for j in self.running)
        for key, count in now.items():
            self.peak[key] = max(self.peak[key], count)

    def poll(self, timeout: float) -> list[Finished | Lost]:
        if timeout < 0:  # as `ray.wait` does; the pool would spin
            raise ValueError(f"poll timeout must be nonnegative, not {timeout}")
        self.on_poll()
        if not self.running:
            return []
        return [self.decide(self.running.pop(0))]

    def cancel_running(self) -> None:
        self.cancelled = True

    def close(self) -> None:
        pass


def tasks(*specs: tuple[str, str | None]) -> list[TaskSpec]:
    return [TaskSpec(id=task_id, prompt="p", provider=provider) for task_id, provider in specs]


def scheduler(
    tmp_path: Path, backend: FakeBackend, todo: list[TaskSpec], **options: object
) -> Scheduler:
    progress = PlainProgress(io.StringIO())
    return Scheduler(todo, backend, OutputDir(tmp_path / "out"), progress, **options)  # type: ignore[arg-type]


def recorded(tmp_path: Path) -> list[str]:
    return list(OutputDir(tmp_path / "out").finished())


def test_max_concurrency_holds_per_provider(tmp_path: Path) -> None:
    backend = FakeBackend(4, lambda job: Finished(job, outcome(job)))
    todo = tasks(*[(f"a{i}", "anthropic") for i in range(4)], ("o1", "openai"), ("o2", "openai"))

    summary = scheduler(tmp_path, backend, todo, max_concurrency={"anthropic": 1}).run()

    assert (summary.succeeded, summary.exit_code) == (6, 0)
    assert backend.peak["anthropic"] == 1 and backend.peak["openai"] == 2
    assert sorted(recorded(tmp_path)) == sorted(t.id for t in todo)


def test_a_lost_worker_is_retried_and_a_failed_task_is_not(tmp_path: Path) -> None:
    def decide(job: Job) -> Finished | Lost:
        if job.task.id == "dies":
            return Lost(job, "worker process died")
        return Finished(job, outcome(job, code=1))

    backend = FakeBackend(2, decide)
    said = io.StringIO()

    summary = Scheduler(
        tasks(("dies", None), ("fails", None)), backend, OutputDir(tmp_path / "out"),
        PlainProgress(said), retries=2,
    ).run()  # fmt: skip

    attempts = Counter(j.task.id for j in backend.submitted)
    assert attempts == {"dies": 3, "fails": 1}
    done = OutputDir(tmp_path / "out").finished()
    assert done["dies"]["exit_code"] == 1 and done["dies"]["attempts"] == 3
    assert "gave up after 3 attempts" in done["dies"]["error"]
    assert (summary.failed, summary.retries, summary.exit_code) == (2, 2, 1)
    notes = [line for line in said.getvalue().splitlines() if "retrying" in line]
    assert notes == [
        "batch: dies: worker process died; retrying (attempt 2)",
        "batch: dies: worker process died; retrying (attempt 3)",
    ]


def test_first_ctrl_c_finishes_running_tasks_and_dispatches_no_more(tmp_path: Path) -> None:
    backend = FakeBackend(1, lambda job: Finished(job, outcome(job)))
    todo = tasks(("one", None), ("two", None), ("three", None))
    first = scheduler(tmp_path, backend, todo)
    backend.on_poll = first.interrupt

    summary = first.run()

    assert recorded(tmp_path) == ["one"]
    assert (summary.cancelled, summary.exit_code) == (2, 130)
    assert not backend.cancelled
    rerun = FakeBackend(1, lambda job: Finished(job, outcome(job)))
    again = scheduler(tmp_path, rerun, todo).run()
    assert [j.task.id for j in rerun.submitted] == ["two", "three"]
    assert (again.skipped, again.succeeded, again.exit_code) == (1, 3, 0)


def test_second_ctrl_c_cancels_and_records_nothing_it_cut_short(tmp_path: Path) -> None:
    backend = FakeBackend(2, lambda job: Finished(job, outcome(job, code=130)))
    todo = tasks(("one", None), ("two", None), ("three", None))
    run = scheduler(tmp_path, backend, todo)

    def twice() -> None:
        run.interrupt()
        run.interrupt()

    backend.on_poll = twice
    summary = run.run()

    assert backend.cancelled
    assert recorded(tmp_path) == []
    assert (summary.cancelled, summary.exit_code) == (3, 130)


def test_workers_import_only_the_sdks_the_tasks_need() -> None:
    from gosling.batch.worker import sdk_modules

    assert sdk_modules(["anthropic", "claude"]) == ("anthropic",)
    assert sdk_modules(["ollama", "openai-responses", "vllm"]) == ("openai",)
    assert sdk_modules(["anthropic", None]) == ("anthropic", "openai")  # None: auto-choice


def test_the_summary_counts_each_exit_code_once_per_task(tmp_path: Path) -> None:
    from gosling.batch.progress import summary_rows

    codes = {"a": 0, "b": 0, "c": 1, "d": 2, "e": 0}
    backend = FakeBackend(2, lambda job: Finished(job, outcome(job, codes[job.task.id])))
    todo = tasks(*((task_id, None) for task_id in codes))
    summary = scheduler(tmp_path, backend, todo).run()
    assert dict(summary_rows(summary))["exit codes"] == "0: 3, 1: 1, 2: 1"
    assert (summary.succeeded, summary.failed) == (3, 2)


def test_a_result_line_says_when_its_task_started_and_how_long_it_took(tmp_path: Path) -> None:
    import json

    ticks = iter([1_000.0, 1_002.5])
    backend = FakeBackend(1, lambda job: Finished(job, outcome(job)))
    todo = tasks(("only", None))
    scheduler(tmp_path, backend, todo, clock=lambda: next(ticks)).run()
    [line] = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    result = json.loads(line)
    assert result["started_at"] == "1970-01-01T00:16:40+00:00"
    assert result["duration_ms"] == 2_500


@pytest.mark.parametrize(
    ("price_of_b", "shown"),
    [(0.5, "$0.7500"), (None, "$0.2500+ (some models unpriced)")],
    ids=["priced", "an unpriced model: a lower bound"],
)
def test_the_summary_costs_what_its_tasks_cost(
    tmp_path: Path, price_of_b: float | None, shown: str
) -> None:
    from gosling.batch.progress import summary_rows

    prices = {"a": 0.25, "b": price_of_b}

    def priced(job: Job) -> Finished:
        done = outcome(job)
        result = {**done.result, "total_cost_usd": prices[job.task.id]}
        return Finished(job, replace(done, result=result))

    summary = scheduler(tmp_path, FakeBackend(2, priced), tasks(("a", None), ("b", None))).run()

    assert dict(summary_rows(summary))["cost"] == shown
