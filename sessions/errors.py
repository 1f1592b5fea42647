"""What can go wrong with the session store, each error saying what to do about it."""

from __future__ import annotations

from pathlib import Path

SALVAGE = (
    "Export the sessions you can still read (`gosling sessions export`), then move the file "
    "aside; gosling starts a new one."
)
"""What to do about a damaged file that may still hold readable sessions."""
MOVE_ASIDE = (
    "Move it aside (for example rename it to sessions.db.broken) and gosling will start a new "
    "one, or restore it from a backup."
)
"""What to do about a file with nothing gosling can read in it."""


class SessionStoreError(Exception):
    """Base of every error the session store raises."""


class StoreUnusable(SessionStoreError):
    """The database file cannot be used as it is; it was left untouched."""

    def __init__(self, path: Path, problem: str, remedy: str) -> None:
        self.path = path
        super().__init__(
            f"cannot use the sessions database {path}: {problem}. {remedy} "
            "The file was not modified."
        )


class CorruptStore(StoreUnusable):
    """The file is not a readable SQLite database (or not one of gosling's)."""


class SchemaTooNew(StoreUnusable):
    """The database was written by a newer gosling with a schema this one does not know."""

    def __init__(self, path: Path, found: int, known: int) -> None:
        self.found = found
        self.known = known
        super().__init__(
            path,
            f"its schema version is {found}, but this gosling understands versions up to {known}",
            "Upgrade gosling (pip install -U gosling-agent), or set GOSLING_HOME to use a "
            "different data directory.",
        )


class StoreUnwritable(SessionStoreError):
    """The database cannot be written right now (a full disk, a read-only directory).

    Every commit that returned before is intact: a commit is one transaction, so the one that
    failed left nothing behind, and the session can be resumed once space or permission is back.
    """

    def __init__(
        self, path: Path, problem: str, remedy: str, session_id: str | None = None
    ) -> None:
        self.path = path
        self.problem = problem
        self.session_id = session_id
        then = f"`gosling run --resume {session_id}`" if session_id else "try again"
        super().__init__(
            f"cannot write the sessions database {path}: {problem}. {remedy}, then {then}; "
            "everything saved before is intact."
        )


class SessionNotFound(SessionStoreError, LookupError):
    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(
            f"no session with id {session_id!r}; `gosling sessions list` shows the ids"
        )


class SessionBusy(SessionStoreError):
    """Another live process is writing to the session; two writers would interleave turns."""

    def __init__(self, session_id: str, holder_pid: int | None) -> None:
        self.session_id = session_id
        self.holder_pid = holder_pid
        who = f"process {holder_pid}" if holder_pid else "another process"
        super().__init__(
            f"session {session_id!r} is open for writing in {who}; finish or close it there "
            "first, or start a new session"
        )


class MessageConflict(SessionStoreError, ValueError):
    """A write would break the rules of the history: ids are unique, contents immutable."""


class SecretRefused(SessionStoreError, ValueError):
    """Extension data tried to store something named like a credential."""


class ImportFailed(SessionStoreError, ValueError):
    """A file could not be imported as a session."""
