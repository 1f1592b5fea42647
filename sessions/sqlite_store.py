"""`SqliteSessionStore`: sessions in one SQLite file, the embedded default.

Connection settings follow the crash-safety checklist: WAL, `foreign_keys`, a busy timeout,
`isolation_level=None` with an explicit `BEGIN IMMEDIATE` around every write, so a turn's
writes land together or not at all. `synchronous=NORMAL` (the default) survives any process
crash; `synchronous="full"` also survives power loss, at about 1 ms more per commit.

Message content is stored as JSON and metadata in its own column, so a visibility flip
rewrites only the metadata. Loading builds one JSON array in SQL and validates it in a single
pydantic call with the cyclic garbage collector paused, which keeps a 10,000-message session
under 200 ms (bench/bench_sessions.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from gosling.conversation import Message, MessageMetadata
from gosling.sessions import sqlite_rows as rows
from gosling.sessions import write_errors
from gosling.sessions.errors import SALVAGE, CorruptStore, MessageConflict, StoreUnusable
from gosling.sessions.locking import SessionLocks
from gosling.sessions.records import (
    Session,
    SessionChanges,
    SessionSnapshot,
    TokenTotals,
    UsageRecord,
)
from gosling.sessions.redaction import redact_json, redact_text, refuse_secret_keys
from gosling.sessions.schema import LATEST_VERSION, migrate, probe, read_only_uri

DEFAULT_FILENAME = "sessions.db"
_VALID_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def make_store_directory(path: Path) -> None:
    """Make the store's directory (0700), or raise `StoreUnusable` saying what is in the way."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreUnusable(
            path,
            f"its directory cannot be made ({exc.strerror or exc}: {_in_the_way(path, exc)})",
            "Point GOSLING_HOME (or XDG_DATA_HOME) at a directory you can write, or move "
            "what is in the way aside.",
        ) from exc


def _can_write(path: Path) -> bool:
    """Whether this process may write the file (or create it) and its side files."""
    if not os.access(path.parent, os.W_OK):
        return False
    return not path.exists() or os.access(path, os.W_OK)


def _sum_usage(records: Sequence[UsageRecord]) -> TokenTotals:
    totals = TokenTotals()
    for record in records:
        totals = totals.plus(record)
    return totals


class SqliteSessionStore:
    """A `SessionStore` in one SQLite file; safe to share between threads and processes."""

    def __init__(
        self,
        path: Path | str,
        *,
        synchronous: Literal["normal", "full"] = "normal",
        busy_timeout: float = 10.0,
    ) -> None:
        if synchronous not in ("normal", "full"):
            raise ValueError(f"synchronous must be 'normal' or 'full', not {synchronous!r}")
        self.path = Path(path)
        make_store_directory(self.path)
        current = probe(self.path) == LATEST_VERSION
        self.read_only = not _can_write(self.path)
        """The file or its directory cannot be written (a read-only mount, permissions): the
        store still reads, and every write raises `StoreUnwritable`."""
        if self.read_only:
            conn = self._connect_read_only(current)
        else:
            conn = self._connect(synchronous, busy_timeout, current)
        self._conn = conn
        self._mutex = threading.RLock()
        self._locks = SessionLocks(self.path.with_name(self.path.name + ".locks"))

    def _connect(self, synchronous: str, busy_timeout: float, current: bool) -> sqlite3.Connection:
        try:
            if not self.path.exists():
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        except OSError as exc:
            raise write_errors.from_os(self.path, exc) from exc
        conn = sqlite3.connect(
            self.path, isolation_level=None, timeout=busy_timeout, check_same_thread=False
        )
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
            conn.execute("PRAGMA foreign_keys = ON")
            if not current:
                migrate(conn, self.path)
        except sqlite3.OperationalError as exc:  # permissions, a full disk, a lock held too long
            conn.close()
            unwritable = write_errors.from_sqlite(self.path, exc)
            if unwritable is not None:
                raise unwritable from exc
            raise StoreUnusable(
                self.path,
                f"SQLite cannot open it ({exc})",
                "Check that you can read and write the file and its directory.",
            ) from exc
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise CorruptStore(self.path, f"SQLite cannot use it ({exc})", SALVAGE) from exc
        except BaseException:
            conn.close()
            raise
        return conn

    def _connect_read_only(self, current: bool) -> sqlite3.Connection:
        """A connection that never writes, not even SQLite's -wal and -shm side files."""
        if not current:
            raise write_errors.read_only(self.path)
        return sqlite3.connect(
            read_only_uri(self.path), uri=True, isolation_level=None, check_same_thread=False
        )

    @classmethod
    def open_default(cls, data_dir: Path, **options: Any) -> SqliteSessionStore:
        """The store at `<data_dir>/sessions.db`; the directory is made private (0700)."""
        path = data_dir / DEFAULT_FILENAME
        make_store_directory(path)
        if data_dir.stat().st_mode & 0o777 != 0o700:
            # A read-only directory cannot be made private; the store then only reads.
            with contextlib.suppress(OSError):
                data_dir.chmod(0o700)
        return cls(path, **options)

    # -- plumbing -------------------------------------------------------------------------------

    @contextmanager
    def _transaction(
        self, begin: str, session_id: str | None = None
    ) -> Iterator[sqlite3.Connection]:
        """One transaction; damage SQLite finds on the way becomes `CorruptStore`, a full disk
        or a read-only file `StoreUnwritable`."""
        with self._mutex:
            try:
                self._conn.execute(begin)
                try:
                    yield self._conn
                    self._conn.execute("COMMIT")
                except BaseException:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:
                unwritable = write_errors.from_sqlite(self.path, exc, session_id)
                if unwritable is None:  # busy, ...: not about the disk
                    raise
                raise unwritable from exc
            except sqlite3.DatabaseError as exc:
                if type(exc) is not sqlite3.DatabaseError:  # integrity, ...: not damage
                    raise
                raise CorruptStore(self.path, f"SQLite reports damage ({exc})", SALVAGE) from exc

    def _write(self, session_id: str | None = None) -> AbstractContextManager[sqlite3.Connection]:
        """A write transaction that takes the database's write lock up front."""
        if self.read_only:
            raise write_errors.read_only(self.path, session_id)
        return self._transaction("BEGIN IMMEDIATE", session_id)

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        """A read transaction, so several queries see one consistent state."""
        return self._transaction("BEGIN")

    def _lease(self, session_id: str) -> None:
        with self._mutex:  # two threads of this process must not race for the same lock
            if not self._locks.holds(session_id):
                with self._read() as conn:
                    rows.require_session(conn, session_id)
                if self.read_only:
                    raise write_errors.read_only(self.path, session_id)
                try:
                    self._locks.acquire(session_id)
                except OSError as exc:
                    raise write_errors.from_os(self.path, exc, session_id) from exc

    def _new_id(self, conn: sqlite3.Connection, now: float) -> str:
        day = time.strftime("%Y%m%d", time.localtime(now))
        taken = conn.execute(
            "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\'", (day + "\\_%",)
        ).fetchall()
        suffixes = (row[0][len(day) + 1 :] for row in taken)
        highest = max((int(s) for s in suffixes if s.isdigit()), default=0)
        return f"{day}_{highest + 1}"

    # -- sessions -------------------------------------------------------------------------------

    def create(
        self,
        *,
        working_dir: Path | str,
        name: str = "",
        provider: str | None = None,
        model: str | None = None,
    ) -> Session:
        now = time.time()
        with self._write() as conn:
            session_id = self._new_id(conn, now)
            conn.execute(
                "INSERT INTO sessions (id, name, working_dir, provider, model, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, redact_text(name), str(working_dir), provider, model, now, now),
            )
            return rows.fetch_session(conn, session_id)

    def get(self, session_id: str) -> Session:
        with self._read() as conn:
            return rows.fetch_session(conn, session_id)

    def list_sessions(self, *, limit: int | None = None) -> list[Session]:
        with self._read() as conn:
            found = conn.execute(
                f"SELECT {rows.SESSION_COLUMNS} FROM sessions "
                "ORDER BY updated_at DESC, rowid DESC LIMIT ?",
                (-1 if limit is None else limit,),
            ).fetchall()
        return [rows.session_from_row(row) for row in found]

    def rename(self, session_id: str, name: str, *, by_user: bool = True) -> Session:
        with self._write(session_id) as conn:
            conn.execute(
                "UPDATE sessions SET name = ?, name_set_by_user = ? WHERE id = ?",
                (redact_text(name), int(by_user), session_id),
            )
            return rows.fetch_session(conn, session_id)

    def update_session(
        self,
        session_id: str,
        *,
        working_dir: Path | str | None = None,
        provider: str | None = None,
        model: str | None = None,
    ) -> Session:
        with self._write(session_id) as conn:
            conn.execute(
                "UPDATE sessions SET working_dir = COALESCE(?, working_dir), "
                "provider = COALESCE(?, provider), model = COALESCE(?, model) WHERE id = ?",
                (None if working_dir is None else str(working_dir), provider, model, session_id),
            )
            return rows.fetch_session(conn, session_id)

    def delete(self, session_id: str) -> None:
        self._lease(session_id)
        with self._write(session_id) as conn:
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        self._locks.release(session_id, remove=True)

    # -- writer lease ---------------------------------------------------------------------------

    def open_for_writing(self, session_id: str) -> None:
        self._lease(session_id)

    def release(self, session_id: str) -> None:
        self._locks.release(session_id)

    # -- messages and usage ---------------------------------------------------------------------

    def commit(self, session_id: str, changes: SessionChanges) -> None:
        if changes.is_empty():
            return
        self._lease(session_id)
        with self._write(session_id) as conn:
            self._apply(conn, session_id, changes)

    def _apply(self, conn: sqlite3.Connection, session_id: str, changes: SessionChanges) -> None:
        """Appends, then metadata updates (which may name just-appended messages), then usage,
        then the session's counters."""
        try:
            conn.executemany(
                rows.INSERT_MESSAGE, [rows.message_row(session_id, m) for m in changes.append]
            )
        except sqlite3.IntegrityError as exc:
            raise MessageConflict(
                f"a message id being appended to session {session_id!r} is already used "
                f"there ({exc}); message ids are unique per session, so append a copy made "
                "with `message.with_new_id()`"
            ) from exc
        for message_id, metadata in changes.metadata.items():
            cursor = conn.execute(
                "UPDATE messages SET metadata_json = ? WHERE session_id = ? AND message_id = ?",
                (metadata.model_dump_json(), session_id, message_id),
            )
            if cursor.rowcount == 0:
                raise MessageConflict(
                    f"session {session_id!r} has no message {message_id!r} to update"
                )
        conn.executemany(rows.INSERT_USAGE, [rows.usage_row(session_id, r) for r in changes.usage])
        delta = _sum_usage(changes.usage)
        context = delta.context_tokens
        if changes.context_tokens is not None:
            context = changes.context_tokens
        conn.execute(
            "UPDATE sessions SET message_count = message_count + ?, "
            "context_tokens = COALESCE(?, context_tokens), "
            "input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, "
            "cache_read_tokens = cache_read_tokens + ?, "
            "cache_write_tokens = cache_write_tokens + ?, model_calls = model_calls + ?, "
            "updated_at = ? WHERE id = ?",
            (
                len(changes.append),
                context,
                delta.input_tokens,
                delta.output_tokens,
                delta.cache_read_tokens,
                delta.cache_write_tokens,
                delta.model_calls,
                time.time(),
                session_id,
            ),
        )

    def append_messages(self, session_id: str, messages: Sequence[Message]) -> None:
        self.commit(session_id, SessionChanges(append=tuple(messages)))

    def update_message_metadata(
        self, session_id: str, message_id: str, metadata: MessageMetadata
    ) -> None:
        self.commit(session_id, SessionChanges(metadata={message_id: metadata}))

    def update_messages_metadata(
        self, session_id: str, updates: Mapping[str, MessageMetadata]
    ) -> None:
        self.commit(session_id, SessionChanges(metadata=dict(updates)))

    def record_usage(self, session_id: str, record: UsageRecord) -> None:
        self.commit(session_id, SessionChanges(usage=(record,)))

    def replace_agent_view(
        self,
        session_id: str,
        messages: Sequence[Message],
        *,
        usage: Sequence[UsageRecord] = (),
        context_tokens: int | None = None,
    ) -> None:
        self._lease(session_id)
        with self._write(session_id) as conn:
            stored = {
                row[0]: (row[1], row[2], row[3])
                for row in conn.execute(
                    "SELECT message_id, seq, content_json, metadata_json FROM messages "
                    "WHERE session_id = ?",
                    (session_id,),
                )
            }
            view = rows.agent_view_changes(session_id, stored, messages)
            changes = SessionChanges(
                append=view.append,
                metadata=view.metadata,
                usage=tuple(usage),
                context_tokens=context_tokens,
            )
            self._apply(conn, session_id, changes)

    def load_messages(self, session_id: str) -> list[Message]:
        with self._read() as conn:
            return rows.fetch_messages(conn, session_id)

    def usage_records(self, session_id: str) -> list[UsageRecord]:
        with self._read() as conn:
            return rows.fetch_usage(conn, session_id)

    # -- extension data -------------------------------------------------------------------------

    def get_extension_data(self, session_id: str) -> dict[str, Any]:
        with self._read() as conn:
            return rows.fetch_extension_data(conn, session_id)

    def set_extension_data(self, session_id: str, key: str, value: Any) -> None:
        refuse_secret_keys({key: value}, "")
        try:
            encoded = json.loads(json.dumps(value))
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"extension data {key!r} must be plain JSON (dicts, lists, strings, numbers, "
                f"booleans, None): {exc}"
            ) from exc
        self._lease(session_id)
        with self._write(session_id) as conn:
            data = rows.fetch_extension_data(conn, session_id)
            if value is None:
                data.pop(key, None)
            else:
                data[key] = encoded
            conn.execute(
                "UPDATE sessions SET extension_data = ?, updated_at = ? WHERE id = ?",
                (redact_json(json.dumps(data)), time.time(), session_id),
            )

    # -- whole sessions -------------------------------------------------------------------------

    def snapshot(self, session_id: str) -> SessionSnapshot:
        with self._read() as conn:
            session = rows.fetch_session(conn, session_id)
            messages = rows.fetch_messages(conn, session_id)
            usage = rows.fetch_usage(conn, session_id)
            extension_data = rows.fetch_extension_data(conn, session_id)
        return SessionSnapshot(
            id=session.id,
            name=session.name,
            working_dir=session.working_dir,
            provider=session.provider,
            model=session.model,
            created_at=session.created_at,
            updated_at=session.updated_at,
            name_set_by_user=session.name_set_by_user,
            messages=messages,
            usage=usage,
            tokens=session.tokens,
            extension_data=extension_data,
        )

    def restore(self, snapshot: SessionSnapshot) -> Session:
        ids = [m.id for m in snapshot.messages]
        if len(set(ids)) != len(ids):
            raise MessageConflict("the session to restore repeats a message id")
        refuse_secret_keys(dict(snapshot.extension_data), "")
        extension_json = redact_json(json.dumps(dict(snapshot.extension_data)))
        tokens = snapshot.tokens or _sum_usage(snapshot.usage)
        now = time.time()
        created = snapshot.created_at if snapshot.created_at is not None else now
        updated = snapshot.updated_at if snapshot.updated_at is not None else created
        with self._write() as conn:
            session_id = snapshot.id
            if (
                session_id is None
                or not _VALID_ID.fullmatch(session_id)
                or conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
            ):
                session_id = self._new_id(conn, now)
            conn.execute(
                f"INSERT INTO sessions ({rows.SESSION_COLUMNS}, extension_data) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    redact_text(snapshot.name),
                    str(snapshot.working_dir),
                    snapshot.provider,
                    snapshot.model,
                    created,
                    updated,
                    len(snapshot.messages),
                    tokens.context_tokens,
                    tokens.input_tokens,
                    tokens.output_tokens,
                    tokens.cache_read_tokens,
                    tokens.cache_write_tokens,
                    tokens.model_calls,
                    int(snapshot.name_set_by_user),
                    extension_json,
                ),
            )
            conn.executemany(
                rows.INSERT_MESSAGE, [rows.message_row(session_id, m) for m in snapshot.messages]
            )
            conn.executemany(
                rows.INSERT_USAGE, [rows.usage_row(session_id, r) for r in snapshot.usage]
            )
            return rows.fetch_session(conn, session_id)

    # -- maintenance ----------------------------------------------------------------------------

    def check_integrity(self) -> list[str]:
        """Problems `PRAGMA integrity_check` finds; empty when the file is sound."""
        with self._read() as conn:
            found = [row[0] for row in conn.execute("PRAGMA integrity_check")]
        return [] if found == ["ok"] else found

    def close(self) -> None:
        with self._mutex:
            self._locks.release_all()
            self._conn.close()

    def __enter__(self) -> SqliteSessionStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _in_the_way(path: Path, exc: OSError) -> str:
    """What stops the store's directory being made: the nearest file where a directory of
    the path should be, else the path the system named."""
    for parent in (path.parent, *path.parent.parents):
        if parent.exists() and not parent.is_dir():
            return str(parent)
    return str(exc.filename or path.parent)
