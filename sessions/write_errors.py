"""Why a write to the store failed, told as `StoreUnwritable` with the fix.

A full disk, a read-only directory and a failing disk reach the store as SQLite result codes
or as `OSError`s from the lock files; either way the user needs the file, the cause and what
to do, not a traceback.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from gosling.sessions.errors import StoreUnwritable

_FULL = ("the disk is full", "Free some space on it")
_READ_ONLY = (
    "it or its directory is read-only",
    "Make the data directory writable (or set GOSLING_HOME to a writable directory; "
    "`gosling sessions list/show/export` still read this one)",
)
_SQLITE_FULL = {sqlite3.SQLITE_FULL}
_SQLITE_READ_ONLY = {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN}
_OS_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_OS_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}


def read_only(path: Path, session_id: str | None = None) -> StoreUnwritable:
    return StoreUnwritable(path, *_READ_ONLY, session_id=session_id)


def from_sqlite(
    path: Path, exc: sqlite3.Error, session_id: str | None = None
) -> StoreUnwritable | None:
    """The error to show for a failed SQLite write, or None when it is not about writing."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code in _SQLITE_FULL:
        return StoreUnwritable(path, *_FULL, session_id=session_id)
    if code in _SQLITE_READ_ONLY:
        return read_only(path, session_id)
    if code == sqlite3.SQLITE_IOERR:
        return StoreUnwritable(
            path,
            f"the disk reported an error ({exc})",
            "Check that the disk has space and is writable",
            session_id=session_id,
        )
    return None


def from_os(path: Path, exc: OSError, session_id: str | None = None) -> StoreUnwritable:
    if exc.errno in _OS_FULL:
        return StoreUnwritable(path, *_FULL, session_id=session_id)
    if exc.errno in _OS_READ_ONLY:
        return read_only(path, session_id)
    return StoreUnwritable(
        path,
        f"{exc.strerror or exc} ({exc.filename or path})",
        "Check that the disk has space and is writable",
        session_id=session_id,
    )
