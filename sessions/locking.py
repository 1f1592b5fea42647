"""One writer per session: an advisory lock file per session next to the database.

The operating system drops the lock when its holder dies (even by SIGKILL), so a crashed
process never blocks a session. The holder writes its pid into the file so the refusal can
name it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from gosling.sessions.errors import SessionBusy


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


class SessionLocks:
    """The writer locks this process holds, in the lock directory of one database."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._held: dict[str, int] = {}

    def _path(self, session_id: str) -> Path:
        return self._directory / f"{session_id}.lock"

    def holds(self, session_id: str) -> bool:
        return session_id in self._held

    def acquire(self, session_id: str) -> None:
        """Take the lock, or raise `SessionBusy` naming the live holder."""
        if session_id in self._held:
            return
        self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self._path(session_id)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        if not _try_lock(fd):
            os.close(fd)
            raise SessionBusy(session_id, _read_pid(path))
        try:
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError:  # a full disk: give the lock back, or a retry here finds it taken
            os.close(fd)
            raise
        self._held[session_id] = fd

    def release(self, session_id: str, *, remove: bool = False) -> None:
        fd = self._held.pop(session_id, None)
        if fd is None:
            return
        if remove:
            with contextlib.suppress(FileNotFoundError):
                self._path(session_id).unlink()
        else:
            os.ftruncate(fd, 0)
        os.close(fd)

    def release_all(self) -> None:
        for session_id in list(self._held):
            self.release(session_id)
