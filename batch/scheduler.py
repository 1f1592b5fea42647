"""The driver: hands tasks to a backend (local pool or Ray), records what finishes, retries
what a dying worker took with it, and stops politely.

Decisions, each in one place:
- what runs next: `_next_job` (skips finished tasks; `--max-concurrency` per provider);
- what a lost worker means: `_lost` (retry up to `retries`, then a failed result);
- what a finished task means: `_finished` (recorded, unless the batch cancelled it);
- Ctrl-C: `interrupt` (first: dispatch nothing new; second: cancel the running tasks).
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from gosling.agent.cli.errors import EXIT_ERROR
from gosling.batch.results import OutputDir
from gosling.batch.tasks import TaskSpec
from gosling.batch.worker import Job, RunDefaults, TaskOutcome

POLL_SECONDS = 0.2
"""How long the driver waits for a result before looking at Ctrl-C again."""


@dataclass(frozen=True)
class Finished:
    job: Job
    outcome: TaskOutcome


@dataclass(frozen=True)
class Lost:
    """The process (or node) running `job` died; the task did not fail by itself."""

    job: Job
    reason: str


class Backend(Protocol):
    """Where tasks run. `slots` is how many may run at once."""

    @property
    def slots(self) -> int: ...

    def submit(self, job: Job) -> None: ...

    def poll(self, timeout: float) -> list[Finished | Lost]:
        """What happened since the last call, waiting up to `timeout` for something."""
        ...

    def cancel_running(self) -> None:
        """Interrupt every running task; each still reports (`Finished` or `Lost`)."""
        ...

    def close(self) -> None: ...


class Progress(Protocol):
    def begin(self, total: int, skipped: int) -> None: ...

    def running(self, count: int) -> None: ...

    def finished(self, line: Mapping[str, Any]) -> None: ...

    def note(self, text: str) -> None: ...

    def end(self, summary: Summary) -> None: ...


@dataclass
class Summary:
    total: int
    skipped: int = 0
    succeeded: int = 0
    failed: int = 0
    cancelled: int = 0
    retries: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    cost_known: bool = True
    interrupted: bool = False
    started: float = field(default_factory=time.monotonic)
    exit_codes: Counter[int] = field(default_factory=Counter)

    def add(self, line: Mapping[str, Any]) -> None:
        code = int(line.get("exit_code", EXIT_ERROR))
        self.exit_codes[code] += 1
        if code == 0:
            self.succeeded += 1
        else:
            self.failed += 1
        self.tokens += int((line.get("tokens") or {}).get("total", 0))
        cost = line.get("total_cost_usd")
        if cost is None:
            self.cost_known = False
        else:
            self.cost_usd += float(cost)

    @property
    def running_done(self) -> int:
        return self.succeeded + self.failed

    @property
    def exit_code(self) -> int:
        """130 when interrupted, 1 when any task failed, else 0."""
        if self.interrupted:
            return 130
        return 1 if self.failed or self.cancelled else 0


def concurrency_key(task: TaskSpec, defaults: RunDefaults) -> str:
    return task.provider or defaults.provider or "default"


class Scheduler:
    def __init__(
        self,
        tasks: Sequence[TaskSpec],
        backend: Backend,
        out: OutputDir,
        progress: Progress,
        *,
        defaults: RunDefaults | None = None,
        retries: int = 2,
        max_concurrency: Mapping[str, int] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.backend = backend
        self.clock = clock
        """Wall-clock time of a task's start and end (the result line's `started_at` and
        `duration_ms`)."""
        self.out = out
        self.progress = progress
        self.defaults = defaults or RunDefaults()
        self.retries = retries
        self.limits = dict(max_concurrency or {})
        done = out.finished()
        self.summary = Summary(total=len(tasks))
        for task in tasks:
            if task.id in done:
                self.summary.skipped += 1
                self.summary.add(done[task.id])
        self.queue: deque[Job] = deque(
            Job(task, str(out.work_root), self.defaults) for task in tasks if task.id not in done
        )
        self.running: dict[str, Job] = {}
        self.stopping = False
        self.cancelling = False
        self._cancel_sent = False

    # -- Ctrl-C ---------------------------------------------------------------------------------

    def interrupt(self) -> None:
        """First call: dispatch nothing new. Second: cancel the running tasks too."""
        if not self.stopping:
            self.stopping = True
            self.summary.interrupted = True
            self.progress.note(
                f"stopping: waiting for {len(self.running)} running task(s); "
                "Ctrl-C again cancels them"
            )
        elif not self.cancelling:
            self.cancelling = True
            self.progress.note(f"cancelling {len(self.running)} running task(s)")

    # -- decisions ------------------------------------------------------------------------------

    def _limit(self, key: str) -> int | None:
        return self.limits.get(key, self.limits.get("*"))

    def _next_job(self) -> Job | None:
        """The first queued job whose provider has room, taken off the queue."""
        if self.stopping or len(self.running) >= self.backend.slots:
            return None
        busy = Counter(concurrency_key(j.task, self.defaults) for j in self.running.values())
        for index, job in enumerate(self.queue):
            key = concurrency_key(job.task, self.defaults)
            limit = self._limit(key)
            if limit is None or busy[key] < limit:
                del self.queue[index]
                return job
        return None

    def _finished(self, job: Job, outcome: TaskOutcome, started_at: float) -> None:
        if outcome.interrupted:
            # Cut short from outside (our second Ctrl-C, or a SIGTERM we did not send): the
            # task did not finish, so it is not a result.
            self._lost(job, "the task was interrupted", started_at)
            return
        result = {
            "task_id": job.task.id,
            **outcome.result,
            "exit_code": outcome.exit_code,
            "duration_ms": round((self.clock() - started_at) * 1000),
            "started_at": datetime.fromtimestamp(started_at, UTC).isoformat(),
            "attempts": job.attempt,
        }
        line = self.out.record(job.task.id, result, outcome.session_jsonl, outcome.log)
        self.summary.add(line)
        self.progress.finished(line)

    def _lost(self, job: Job, reason: str, started_at: float) -> None:
        if self.cancelling:
            self.summary.cancelled += 1
            return
        if job.attempt <= self.retries:
            self.summary.retries += 1
            self.progress.note(f"{job.task.id}: {reason}; retrying (attempt {job.attempt + 1})")
            self.queue.appendleft(replace(job, attempt=job.attempt + 1))
            return
        from gosling.batch.worker import failure_payload

        error = f"{reason} (gave up after {job.attempt} attempts)"
        outcome = TaskOutcome(job.task.id, EXIT_ERROR, failure_payload(error), None, "")
        self._finished(job, outcome, started_at)

    # -- the loop -------------------------------------------------------------------------------

    def _dispatch(self, started_at: dict[str, float]) -> None:
        while (job := self._next_job()) is not None:
            self.running[job.task.id] = job
            started_at[job.task.id] = self.clock()
            self.backend.submit(job)

    def run(self) -> Summary:
        self.progress.begin(self.summary.total, self.summary.skipped)
        started_at: dict[str, float] = {}
        try:
            while self.queue or self.running:
                if self.stopping and not self.running:
                    break
                if self.cancelling and not self._cancel_sent:
                    self._cancel_sent = True
                    self.backend.cancel_running()
                self._dispatch(started_at)
                self.progress.running(len(self.running))
                for event in self.backend.poll(POLL_SECONDS):
                    job = self.running.pop(event.job.task.id)
                    began = started_at.pop(job.task.id)
                    if isinstance(event, Finished):
                        # The freed worker gets its next task before this one is recorded
                        # (three fsyncs), not after.
                        self._dispatch(started_at)
                        self._finished(job, event.outcome, began)
                    else:
                        self._lost(job, event.reason, began)
                    self.progress.running(len(self.running))
        finally:
            self.backend.close()
        self.summary.cancelled += len(self.queue)
        self.progress.end(self.summary)
        return self.summary
