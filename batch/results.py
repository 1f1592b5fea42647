"""The batch's output directory: `results.jsonl`, `sessions/`, `logs/`, `work/`.

Only the driver writes here, one finished task at a time: first the session file and the
log (each written whole, then renamed into place), then the task's result line, appended,
flushed and synced. A line in `results.jsonl` therefore always has its session file, and
a task is done exactly when its line is there: that is what a rerun skips.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

# Imported with the driver's other modules, while the forkserver warms up on the other core
# and the driver only waits for it; imported at the first result instead, it would take CPU
# from the workers just as eight of them finish and eight start.
from gosling.sessions.files import write_private

RESULTS = "results.jsonl"
LOCK = ".lock"
"""Held (`flock`) by the one driver using the directory, for as long as it runs."""


class OutputInUse(Exception):
    """Another `gosling batch` is using this output directory; the message says which."""


def _write_whole(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private(path, text)


class OutputDir:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.results_path = self.root / RESULTS
        self.work_root = self.root / "work"
        self._lock_fd: int | None = None

    def lock(self) -> None:
        """Claim the directory for this driver until it exits (the kernel drops the lock of
        a killed one), or raise `OutputInUse`: two drivers on one directory would run every
        task twice and interleave their lines."""
        import fcntl

        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise OutputInUse(
                f"{self.root} is in use by another gosling batch (pid {holder}); wait for it "
                "to finish, or give another -o"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def session_path(self, task_id: str) -> Path:
        return self.root / "sessions" / f"{task_id}.jsonl"

    def log_path(self, task_id: str) -> Path:
        return self.root / "logs" / f"{task_id}.log"

    def finished(self) -> dict[str, dict[str, Any]]:
        """The result of every task already done, by id. A last line cut short by a crash
        is not a result: it is removed, and its task runs again."""
        self.root.mkdir(parents=True, exist_ok=True)
        if not self.results_path.exists():
            return {}
        raw = self.results_path.read_bytes()
        complete = raw[: raw.rfind(b"\n") + 1]
        if len(complete) != len(raw):
            with self.results_path.open("r+b") as out:
                out.truncate(len(complete))
        done: dict[str, dict[str, Any]] = {}
        for number, line in enumerate(complete.decode("utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                result = json.loads(line)
            except ValueError as exc:
                raise ValueError(
                    f"{self.results_path}:{number}: not a result line ({exc}); move the file "
                    "away to start the batch over"
                ) from exc
            if isinstance(result, dict) and isinstance(result.get("task_id"), str):
                done[result["task_id"]] = result
        return done

    def forget_failed(self) -> list[str]:
        """Drop the result lines of failed tasks (exit code not 0), so the next run does
        them again; the other lines stay as they were. Returns the ids dropped. The file is
        replaced whole (written aside, then renamed), so a crash leaves one or the other."""
        done = self.finished()
        failed = [task_id for task_id, line in done.items() if line.get("exit_code") != 0]
        if not failed:
            return []
        kept = [
            json.dumps(line, default=str) for line in done.values() if line.get("exit_code") == 0
        ]
        aside = self.results_path.with_name(RESULTS + ".tmp")
        aside.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
        os.replace(aside, self.results_path)
        return failed

    def record(
        self, task_id: str, result: dict[str, Any], session_jsonl: str | None, log: str
    ) -> dict[str, Any]:
        """Save a finished task; returns the line as written."""
        session_file = None
        if session_jsonl is not None:
            path = self.session_path(task_id)
            _write_whole(path, session_jsonl)
            session_file = str(path)
        _write_whole(self.log_path(task_id), log)
        line = {**result, "session_file": session_file}
        with self.results_path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line, default=str) + "\n")
            out.flush()
            os.fsync(out.fileno())
        return line
