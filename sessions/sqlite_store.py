"""`SqliteSessionStore`: sessions in one SQLite file, the embedded default.

Connection settings follow the crash-safety checklist: WAL, `foreign_keys`, a busy timeout,
`isolation_level=None` with an explicit `BEGIN IMMEDIATE` around every write, so a turn's
writes land together or not at all. `synchronous=NORMAL` (the default) survives any process
crash; `synchronous="full"` also survives power loss at about 1 ms more per commit.

Message content is stored as JSON and metadata in its own column, so a visibility flip
rewrites only the metadata. Loading builds one JSON array in SQL and validates it in a single
pydantic call, which keeps a 10,000-message session well under 200 ms.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from pydantic import TypeAdapter

from conversation import Content, Message, MessageMetadata
from providers import Usage
from sessions.errors import CorruptStore, MessageConflict, SessionNotFound
from sessions.locking import SessionLocks
from sessions.records import (
    Session,
    SessionChanges,
    SessionSnapshot,
    TokenTotals,
    UsageKind,
    UsageRecord,
)
from sessions.redaction import redact_json, redact_text, refuse_secret_keys
from sessions.schema import migrate, probe

DEFAULT_FILENAME = "sessions.db"
_VALID_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")

_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
_CONTENT: TypeAdapter[tuple[Content, ...]] = TypeAdapter(tuple[Content, ...])

_SESSION_COLUMNS = (
    "id, name, working_dir, provider, model, created_at, updated_at, message_count, "
    "context_tokens, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, "
    "model_calls, name_set_by_user"
)
# One JSON object per row, assembled by SQLite; `role` is checked on insert, ids are quoted.
_LOAD_MESSAGES = (
    """SELECT '{"role":"' || role || '","id":' || json_quote(message_id)"""
    """ || ',"created":' || created || ',"content":' || content_json"""
    """ || ',"metadata":' || metadata_json || '}'"""
    " FROM messages WHERE session_id = ? ORDER BY seq"
)


def _content_json(message: Message) -> str:
    return redact_json(_CONTENT.dump_json(message.content).decode())


def _session_from_row(row: Sequence[Any]) -> Session:
    return Session(
        id=row[0],
        name=row[1],
        working_dir=Path(row[2]),
        provider=row[3],
        model=row[4],
        created_at=row[5],
        updated_at=row[6],
        message_count=row[7],
        tokens=TokenTotals(
            context_tokens=row[8],
            input_tokens=row[9],
            output_tokens=row[10],
            cache_read_tokens=row[11],
            cache_write_tokens=row[12],
            model_calls=row[13],
        ),
        name_set_by_user=bool(row[14]),
    )


def _sum_usage(records: Sequence[UsageRecord], start: TokenTotals) -> TokenTotals:
    totals = start
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
        self.path = Path(path)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        probe(self.path)
        if not self.path.exists():
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        conn = sqlite3.connect(
            self.path, isolation_level=None, timeout=busy_timeout, check_same_thread=False
        )
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
            conn.execute("PRAGMA foreign_keys = ON")
            migrate(conn, self.path)
        except sqlite3.DatabaseError as exc:
            conn.close()
            if isinstance(exc, sqlite3.OperationalError):
                raise
            raise CorruptStore(self.path, f"SQLite cannot use it ({exc})", "") from exc
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._mutex = threading.RLock()
        self._locks = SessionLocks(self.path.with_name(self.path.name + ".locks"))

    @classmethod
    def open_default(cls, data_dir: Path, **options: Any) -> SqliteSessionStore:
        """The store at `<data_dir>/sessions.db`; the directory is made private (0700)."""
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        data_dir.chmod(0o700)
        return cls(data_dir / DEFAULT_FILENAME, **options)

    # -- plumbing -------------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._mutex:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction, so several queries see one consistent state."""
        with self._mutex:
            self._conn.execute("BEGIN")
            try:
                yield self._conn
            finally:
                self._conn.execute("COMMIT")

    def _require(self, conn: sqlite3.Connection, session_id: str) -> None:
        if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
            raise SessionNotFound(session_id)

    def _lease(self, session_id: str) -> None:
        if not self._locks.holds(session_id):
            with self._mutex:
                self._require(self._conn, session_id)
            self._locks.acquire(session_id)

    def _new_id(self, conn: sqlite3.Connection, now: float) -> str:
        day = time.strftime("%Y%m%d", time.localtime(now))
        rows = conn.execute(
            "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\'", (day + "\\_%",)
        ).fetchall()
        suffixes = (row[0][len(day) + 1 :] for row in rows)
        taken = max((int(s) for s in suffixes if s.isdigit()), default=0)
        return f"{day}_{taken + 1}"

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
        return self.get(session_id)

    def get(self, session_id: str) -> Session:
        with self._mutex:
            row = self._conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        if row is None:
            raise SessionNotFound(session_id)
        return _session_from_row(row)

    def list_sessions(self, *, limit: int | None = None) -> list[Session]:
        with self._mutex:
            rows = self._conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions "
                "ORDER BY updated_at DESC, rowid DESC LIMIT ?",
                (-1 if limit is None else limit,),
            ).fetchall()
        return [_session_from_row(row) for row in rows]

    def rename(self, session_id: str, name: str, *, by_user: bool = True) -> Session:
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE sessions SET name = ?, name_set_by_user = ? WHERE id = ?",
                (redact_text(name), int(by_user), session_id),
            )
            if cursor.rowcount == 0:
                raise SessionNotFound(session_id)
        return self.get(session_id)

    def update_session(
        self,
        session_id: str,
        *,
        working_dir: Path | str | None = None,
        provider: str | None = None,
        model: str | None = None,
    ) -> Session:
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE sessions SET working_dir = COALESCE(?, working_dir), "
                "provider = COALESCE(?, provider), model = COALESCE(?, model) WHERE id = ?",
                (None if working_dir is None else str(working_dir), provider, model, session_id),
            )
            if cursor.rowcount == 0:
                raise SessionNotFound(session_id)
        return self.get(session_id)

    def delete(self, session_id: str) -> None:
        self._lease(session_id)
        with self._write() as conn:
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
        with self._write() as conn:
            self._apply(conn, session_id, changes)

    def _apply(self, conn: sqlite3.Connection, session_id: str, changes: SessionChanges) -> None:
        """Appends, then metadata updates (which may name just-appended messages), then usage,
        then the session's counters."""
        rows = [
            (
                session_id,
                m.id,
                m.role,
                m.created,
                _content_json(m),
                m.metadata.model_dump_json(),
            )
            for m in changes.append
        ]
        try:
            conn.executemany(
                "INSERT INTO messages (session_id, message_id, role, created, content_json, "
                "metadata_json) VALUES (?, ?, ?, ?, ?, ?)",
                rows,
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
        conn.executemany(
            "INSERT INTO usage (session_id, created, model, kind, input_tokens, output_tokens, "
            "cache_read_tokens, cache_write_tokens, stop_reason) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    session_id,
                    r.created,
                    r.model,
                    str(r.kind),
                    r.usage.input_tokens,
                    r.usage.output_tokens,
                    r.usage.cache_read_tokens,
                    r.usage.cache_write_tokens,
                    r.usage.stop_reason,
                )
                for r in changes.usage
            ],
        )
        delta = _sum_usage(changes.usage, TokenTotals())
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
                len(rows),
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
        with self._write() as conn:
            stored = {
                row[0]: (row[1], row[2], row[3])
                for row in conn.execute(
                    "SELECT message_id, seq, content_json, metadata_json FROM messages "
                    "WHERE session_id = ?",
                    (session_id,),
                )
            }
            changes = _agent_view_changes(session_id, stored, messages)
            changes = SessionChanges(
                append=changes.append,
                metadata=changes.metadata,
                usage=tuple(usage),
                context_tokens=context_tokens,
            )
            self._apply(conn, session_id, changes)

    def load_messages(self, session_id: str) -> list[Message]:
        with self._read() as conn:
            rows = conn.execute(_LOAD_MESSAGES, (session_id,)).fetchall()
            if not rows:
                self._require(conn, session_id)
        return _MESSAGES.validate_json("[" + ",".join(row[0] for row in rows) + "]")

    def usage_records(self, session_id: str) -> list[UsageRecord]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT created, model, kind, input_tokens, output_tokens, cache_read_tokens, "
                "cache_write_tokens, stop_reason FROM usage WHERE session_id = ? ORDER BY seq",
                (session_id,),
            ).fetchall()
            if not rows:
                self._require(conn, session_id)
        return [
            UsageRecord(
                usage=Usage(
                    input_tokens=row[3],
                    output_tokens=row[4],
                    cache_read_tokens=row[5],
                    cache_write_tokens=row[6],
                    stop_reason=row[7],
                ),
                model=row[1],
                kind=UsageKind(row[2]),
                created=row[0],
            )
            for row in rows
        ]

    # -- extension data -------------------------------------------------------------------------

    def get_extension_data(self, session_id: str) -> dict[str, Any]:
        with self._mutex:
            row = self._conn.execute(
                "SELECT extension_data FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        if row is None:
            raise SessionNotFound(session_id)
        data: dict[str, Any] = json.loads(row[0])
        return data

    def set_extension_data(self, session_id: str, key: str, value: Any) -> None:
        refuse_secret_keys({key: value}, "")
        encoded_value = _encode_extension_value(key, value)
        self._lease(session_id)
        with self._write() as conn:
            (current,) = conn.execute(
                "SELECT extension_data FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            data = json.loads(current)
            if value is None:
                data.pop(key, None)
            else:
                data[key] = json.loads(encoded_value)
            conn.execute(
                "UPDATE sessions SET extension_data = ?, updated_at = ? WHERE id = ?",
                (redact_json(json.dumps(data)), time.time(), session_id),
            )

    # -- whole sessions -------------------------------------------------------------------------

    def snapshot(self, session_id: str) -> SessionSnapshot:
        with self._read():
            session = self.get(session_id)
            messages = self.load_messages(session_id)
            usage = self.usage_records(session_id)
            extension_data = self.get_extension_data(session_id)
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
        tokens = snapshot.tokens or _sum_usage(snapshot.usage, TokenTotals())
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
                f"INSERT INTO sessions ({_SESSION_COLUMNS}, extension_data) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    redact_text(snapshot.name),
                    str(snapshot.working_dir),
                    snapshot.provider,
                    snapshot.model,
                    created,
                    updated,
                    0,
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
            self._apply(
                conn,
                session_id,
                SessionChanges(append=tuple(snapshot.messages), usage=tuple(snapshot.usage)),
            )
            # _apply counted the usage and bumped updated_at; the snapshot's values win.
            conn.execute(
                "UPDATE sessions SET updated_at = ?, context_tokens = ?, input_tokens = ?, "
                "output_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, "
                "model_calls = ? WHERE id = ?",
                (
                    updated,
                    tokens.context_tokens,
                    tokens.input_tokens,
                    tokens.output_tokens,
                    tokens.cache_read_tokens,
                    tokens.cache_write_tokens,
                    tokens.model_calls,
                    session_id,
                ),
            )
        return self.get(session_id)

    # -- maintenance ----------------------------------------------------------------------------

    def check_integrity(self) -> list[str]:
        """Problems `PRAGMA integrity_check` finds; empty when the file is sound."""
        with self._mutex:
            rows = self._conn.execute("PRAGMA integrity_check").fetchall()
        problems = [row[0] for row in rows]
        return [] if problems == ["ok"] else problems

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


def _encode_extension_value(key: str, value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"extension data {key!r} must be plain JSON (dicts, lists, strings, numbers, "
            f"booleans, None): {exc}"
        ) from exc


def _agent_view_changes(
    session_id: str,
    stored: Mapping[str, tuple[int, str, str]],
    messages: Sequence[Message],
) -> SessionChanges:
    """What to write so the stored agent view becomes that of `messages`.

    New messages can only be appended, so every agent-visible stored message in `messages`
    must come before every agent-visible new one, in stored order.
    """
    append: list[Message] = []
    metadata: dict[str, MessageMetadata] = {}
    seen: set[str] = set()
    last_seq = -1
    new_visible = False
    for message in messages:
        if message.id in seen:
            raise MessageConflict(f"message {message.id!r} appears twice in the new view")
        seen.add(message.id)
        if message.id not in stored:
            append.append(message)
            new_visible = new_visible or message.metadata.agent_visible
            continue
        seq, content_json, metadata_json = stored[message.id]
        if _content_json(message) != content_json:
            raise MessageConflict(
                f"message {message.id!r} of session {session_id!r} has different content "
                "than the stored one; stored messages never change, give a replacement a new id"
            )
        if message.metadata.agent_visible:
            if new_visible or seq < last_seq:
                raise MessageConflict(
                    "the new agent view puts stored messages after new ones or out of their "
                    "stored order; new messages can only be appended at the end"
                )
            last_seq = seq
        if message.metadata.model_dump_json() != metadata_json:
            metadata[message.id] = message.metadata
    for message_id, (_, _, metadata_json) in stored.items():
        if message_id not in seen:
            old = MessageMetadata.model_validate_json(metadata_json)
            if old.agent_visible:
                metadata[message_id] = old.with_agent_invisible()
    return SessionChanges(append=tuple(append), metadata=metadata)
