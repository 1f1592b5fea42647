"""The embedded engine: `--workers N` processes on this machine, each reused for task after
task (the SDK imports are paid once per process, not once per task).

Workers are forked from a `forkserver` that has already imported and warmed up the runtime
(`batch.forkserver`, `batch.prefork`), so starting eight costs about one import, and a
worker's first task runs about as fast as its tenth. The session store's schema is made
there too, once, before any worker opens the store. Each worker sits in its own process
group, so the terminal's Ctrl-C reaches only the driver, which decides what to stop. The
driver tracks which worker runs which task; a worker that dies (killed, out of memory) is
reported as `Lost` and replaced.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import select
import signal
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from typing import Any

from gosling.batch import forkserver
from gosling.batch.scheduler import Finished, Lost
from gosling.batch.worker import Job, killed_past_timeout, task_timeout

CLOSE_GRACE_SECONDS = 5.0
KILL_GRACE = 5.0
"""Seconds a worker has, after its task's timeout cancelled the run, to wind it down."""


def _serve(
    conn: Connection,
    until: Synchronized[float],
    log_file: str,
    providers: list[str | None],
    driver: int,
) -> None:
    """A worker: run each job it is sent until the driver hangs up, or dies."""
    os.setpgrp()
    die_with(driver)
    fd = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    from gosling.batch.backoff import LocalBackoff
    from gosling.batch.worker import run_task, sdk_modules, warm_up

    backoff = LocalBackoff(until)
    # Done already in a worker forked from a warm forkserver. Best effort: what fails here (a
    # CA bundle that cannot be loaded) fails again in each task, which reports it with its fix.
    with contextlib.suppress(Exception):
        warm_up(sdk_modules(providers))
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        outcome = run_task(job, backoff)
        try:
            conn.send(outcome)
        except (BrokenPipeError, OSError):
            return


def die_with(driver: int) -> None:
    """SIGKILL this worker the moment the driver process ends, however it ends. A worker is
    forked from the forkserver, not from the driver, so no parent-death signal reaches it,
    and it reads the driver's pipe only between tasks: without this, a SIGKILLed driver left
    its workers finishing their tasks while a rerun ran the same tasks again. The worker's
    tool processes follow (their parent-death signal; bwrap's `--die-with-parent`)."""
    if not hasattr(os, "pidfd_open"):  # Linux only; elsewhere the pipe's EOF between tasks
        return
    try:
        pidfd = os.pidfd_open(driver)
    except OSError:  # gone already
        os.kill(os.getpid(), signal.SIGKILL)
        return

    def watch() -> None:
        select.select([pidfd], [], [])  # readable once the driver has exited
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="driver-watch", daemon=True).start()


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection
    job: Job | None = None
    kill_at: float | None = None
    """When the job's timeout and the grace after it are over (`time.monotonic()`)."""


class LocalPool:
    def __init__(self, workers: int, log_dir: Path, providers: list[str | None]) -> None:
        """`providers`: the tasks' providers (None: the automatic choice), whose SDKs are
        imported once, in the forkserver."""
        method = "forkserver" if forkserver.available() else "spawn"
        self._ctx: Any = multiprocessing.get_context(method)
        if method == "forkserver":
            # Also prepares the session store (`batch.prefork`), before any worker forks.
            forkserver.start(providers)  # a no-op when `gosling batch` started it already
        else:
            prepare_session_store()
        self._providers = providers
        self._size = workers
        self._until: Synchronized[float] = self._ctx.Value("d", 0.0)
        log_dir.mkdir(parents=True, exist_ok=True)
        self._log_file = str(log_dir / "workers.log")
        self._workers: list[_Worker] = []

    @property
    def slots(self) -> int:
        return self._size

    def _start_worker(self) -> _Worker:
        ours, theirs = self._ctx.Pipe()
        process = self._ctx.Process(
            target=_serve,
            args=(theirs, self._until, self._log_file, self._providers, os.getpid()),
            daemon=True,
        )
        process.start()
        theirs.close()
        worker = _Worker(process, ours)
        self._workers.append(worker)
        return worker

    def submit(self, job: Job) -> None:
        idle = next((w for w in self._workers if w.job is None), None)
        worker = idle or self._start_worker()
        worker.job = job
        timeout = task_timeout(job)
        worker.kill_at = None if timeout is None else time.monotonic() + timeout + KILL_GRACE
        worker.conn.send(job)

    def poll(self, timeout: float) -> list[Finished | Lost]:
        busy = [w for w in self._workers if w.job is not None]
        handles: list[Any] = [w.conn for w in busy] + [w.process.sentinel for w in busy]
        kills = [w.kill_at for w in busy if w.kill_at is not None]
        if kills:
            timeout = max(0.0, min(timeout, min(kills) - time.monotonic()))
        ready = set(wait(handles, timeout)) if handles else set()
        events: list[Finished | Lost] = []
        for worker in busy:
            if worker.conn not in ready and worker.process.sentinel not in ready:
                continue
            job = worker.job
            assert job is not None
            try:
                outcome = worker.conn.recv()
            except (EOFError, OSError):
                worker.process.join()
                events.append(Lost(job, f"worker process died ({describe_exit(worker.process)})"))
                self._discard(worker)
                continue
            worker.job = None
            events.append(Finished(job, outcome))
        events += self._kill_overdue()
        return events

    def _kill_overdue(self) -> list[Finished | Lost]:
        """A worker still busy `KILL_GRACE` after its task's timeout did not stop when the
        task was cancelled: kill it (and its children), record the task as timed out, and
        let the next task start a fresh worker."""
        now = time.monotonic()
        events: list[Finished | Lost] = []
        for worker in [w for w in self._workers if w.job is not None]:
            if worker.kill_at is None or worker.kill_at > now or worker.process.pid is None:
                continue
            job, pid = worker.job, worker.process.pid
            assert job is not None
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)  # its own group (`_serve`), tools included
            worker.process.kill()
            worker.process.join()
            self._discard(worker)
            events.append(Finished(job, killed_past_timeout(job, pid)))
        return events

    def cancel_running(self) -> None:
        for worker in self._workers:
            if worker.job is not None and worker.process.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(worker.process.pid, signal.SIGTERM)

    def _discard(self, worker: _Worker) -> None:
        worker.conn.close()
        self._workers.remove(worker)

    def close(self) -> None:
        for worker in self._workers:
            worker.conn.close()
        for worker in self._workers:
            worker.process.join(CLOSE_GRACE_SECONDS)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
        self._workers.clear()


def prepare_session_store() -> None:
    """Create or migrate the shared session store now, once, before any worker starts, so
    that the workers' first runs do not all try at once (each waiting on the others' write
    lock). Closed again at once: a connection must not cross a fork. Best effort: a store
    that cannot be opened is reported by every task that needs it."""
    from gosling.prompts.locations import user_dirs
    from gosling.sessions import SessionStoreError, SqliteSessionStore

    # The file `agent.runtime.open_store` opens, without importing the runtime here.
    with contextlib.suppress(SessionStoreError, OSError):
        SqliteSessionStore.open_default(user_dirs().data).close()


def describe_exit(process: BaseProcess) -> str:
    """How a worker process ended: the signal that killed it, or its exit status."""
    code = process.exitcode
    if code is not None and code < 0:
        return f"pid {process.pid}, killed by {signal.Signals(-code).name}"
    return f"pid {process.pid}, exit code {code}"
