"""Spill files: the full output of a tool call that was too long to show the model.

They live with their session, `<state dir>/sessions/<session id>/spill/` (directory 0700, files
0600), hold redacted text only (see `redact`), disappear with the session
(`remove_session_files`) and are swept after `SPILL_MAX_AGE_SECS` (`sweep_spill_files`, run
at the start of `gosling run` and `gosling session`). The session's sandboxed `/tmp`
(`session_tmp_dir`) lives beside them and goes the same way. Any tool that caps its output calls
`open_spill_file(directory, label)`, writes bytes and closes it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from gosling.redact import redact

SPILL_MAX_AGE_SECS = 7 * 24 * 3600
TMP_DIR = "tmp"
"""A session's sandboxed `/tmp`, beside its `spill` directory."""
NO_SESSION = "no-session"
"""The directory name used for runs without a stored session (`--no-session`)."""
_REDACT_BLOCK = 64 * 1024
"""Redact and write once this much is pending (whole lines only)."""
_MAX_HELD_KEY = 1024 * 1024
"""A private-key block is held back until its END line, up to this size."""


def sessions_state_dir() -> Path:
    from gosling.prompts.locations import user_dirs

    return user_dirs().state / "sessions"


def spill_dir_for(session_id: str | None) -> Path:
    """Where the spill files of a session go."""
    name = session_id or NO_SESSION
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"not a session id: {name!r}")
    return sessions_state_dir() / name / "spill"


def _tmp_of(session_id: str) -> Path:
    return spill_dir_for(session_id).parent / TMP_DIR


def session_tmp_dir(session_id: str) -> Path:
    """The directory a session's sandboxed commands see as `/tmp` (created 0700 here, and
    touched on every use): it lives with the session's spill files, goes with
    `gosling sessions rm`, and is swept a week after the session last ran a command."""
    directory = _tmp_of(session_id)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.utime(directory)
    return directory


class SpillFile:
    """A private file that receives raw output and stores it redacted.

    Output arrives in arbitrary chunks; only whole lines are redacted and written, and a
    private-key block is held back until its END line, so a secret is never cut in two.
    """

    def __init__(self, handle: BinaryIO, path: Path, *, redact_text: bool = True) -> None:
        self._handle = handle
        self.path = path
        self.redact_text = redact_text
        """False for binary data (images), written as it comes."""
        self._pending = bytearray()

    def write(self, data: bytes) -> None:
        if not self.redact_text:
            self._handle.write(data)
            return
        self._pending += data
        if len(self._pending) >= _REDACT_BLOCK:
            self._flush(final=False)

    def close(self) -> None:
        if not self._handle.closed:
            self._flush(final=True)
            self._handle.close()

    def __enter__(self) -> SpillFile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _flush(self, *, final: bool) -> None:
        cut = len(self._pending) if final else self._pending.rfind(b"\n") + 1
        begin = self._pending.rfind(b"-----BEGIN", 0, cut)
        if (
            not final
            and begin != -1
            and self._pending.find(b"-----END", begin, cut) == -1
            and cut - begin < _MAX_HELD_KEY
        ):
            cut = begin
        if cut <= 0:
            return
        text = bytes(self._pending[:cut]).decode("utf-8", errors="replace")
        self._handle.write(redact(text).encode("utf-8"))
        del self._pending[:cut]


def open_spill_file(
    directory: Path, label: str, suffix: str = ".txt", *, redact_text: bool = True
) -> SpillFile:
    """A new spill file `gosling-<label>-*<suffix>` in `directory` (created 0700), mode
    0600; text is redacted as it is written unless `redact_text` is False (binary data)."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(directory, 0o700)
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in label)[:40] or "output"
    for _ in range(100):
        path = directory / f"gosling-{safe}-{os.urandom(6).hex()}{suffix}"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        return SpillFile(os.fdopen(fd, "wb"), path, redact_text=redact_text)
    raise FileExistsError(f"cannot create a spill file in {directory}")


def remove_session_files(session_id: str) -> None:
    """Delete what gosling kept on disk for a session (its spill files)."""
    shutil.rmtree(spill_dir_for(session_id).parent, ignore_errors=True)


def remove_session_tmp(session_id: str) -> None:
    """Delete a session's `/tmp` now (a batch task's, once the task is over)."""
    shutil.rmtree(_tmp_of(session_id), ignore_errors=True)


def sweep_spill_files(max_age: float = SPILL_MAX_AGE_SECS, now: float | None = None) -> int:
    """Delete spill files older than `max_age` seconds (returns how many) and sessions'
    `/tmp` directories untouched for as long. Cheap: one directory listing per session
    directory."""
    root = sessions_state_dir()
    if not root.is_dir():
        return 0
    cutoff = (time.time() if now is None else now) - max_age
    removed = 0
    for session in os.scandir(root):
        spill = Path(session.path) / "spill"
        try:
            entries = list(os.scandir(spill))
        except OSError:
            entries = []
        for entry in entries:
            try:
                if entry.is_file(follow_symlinks=False) and entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                continue
        _sweep_tmp(Path(session.path) / TMP_DIR, cutoff)
        for emptied in (spill, Path(session.path)):
            with contextlib.suppress(OSError):
                emptied.rmdir()
    return removed


def _sweep_tmp(tmp: Path, cutoff: float) -> None:
    """Remove a session's `/tmp` unused since `cutoff` (symlinks in it are removed, never
    followed)."""
    try:
        if tmp.stat().st_mtime >= cutoff:
            return
    except OSError:
        return
    shutil.rmtree(tmp, ignore_errors=True)
