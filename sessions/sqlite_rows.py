"""Row-level SQL for `SqliteSessionStore`: how records map to rows and back."""

from __future__ import annotations

import gc
import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from gosling.conversation import Content, Message, MessageMetadata
from gosling.providers import Usage
from gosling.sessions.errors import MessageConflict, SessionNotFound
from gosling.sessions.records import Session, SessionChanges, TokenTotals, UsageKind, UsageRecord
from gosling.sessions.redaction import redact_json

_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
_CONTENT: TypeAdapter[tuple[Content, ...]] = TypeAdapter(tuple[Content, ...])

SESSION_COLUMNS = (
    "id, name, working_dir, provider, model, created_at, updated_at, message_count, "
    "context_tokens, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, "
    "model_calls, name_set_by_user"
)
# One JSON object per row, assembled by SQLite; `role` is checked on insert, ids are quoted.
# Default metadata is left out, so pydantic shares its default instead of building 10,000.
_LOAD_MESSAGES = (
    """SELECT '{"role":"' || role || '","id":' || json_quote(message_id)"""
    """ || ',"created":' || created || ',"content":' || content_json"""
    """ || CASE WHEN metadata_json = ? THEN '' ELSE ',"metadata":' || metadata_json END"""
    """ || '}' FROM messages WHERE session_id = ? ORDER BY seq"""
)
_DEFAULT_METADATA_JSON = MessageMetadata().model_dump_json()
INSERT_MESSAGE = (
    "INSERT INTO messages (session_id, message_id, role, created, content_json, metadata_json) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
INSERT_USAGE = (
    "INSERT INTO usage (session_id, created, model, kind, input_tokens, output_tokens, "
    "cache_read_tokens, cache_write_tokens, stop_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def content_json(message: Message) -> str:
    """The message's content parts as stored: JSON, with credential values redacted."""
    return redact_json(_CONTENT.dump_json(message.content).decode())


def message_row(session_id: str, message: Message) -> tuple[str, str, str, int, str, str]:
    return (
        session_id,
        message.id,
        message.role,
        message.created,
        content_json(message),
        message.metadata.model_dump_json(),
    )


def usage_row(session_id: str, record: UsageRecord) -> tuple[Any, ...]:
    usage = record.usage
    return (
        session_id,
        record.created,
        record.model,
        str(record.kind),
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.stop_reason,
    )


def require_session(conn: sqlite3.Connection, session_id: str) -> None:
    if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
        raise SessionNotFound(session_id)


def fetch_session(conn: sqlite3.Connection, session_id: str) -> Session:
    row = conn.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if row is None:
        raise SessionNotFound(session_id)
    return session_from_row(row)


def session_from_row(row: Sequence[Any]) -> Session:
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


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Loading 10,000 messages builds some 35,000 objects, none of them in a cycle; left on,
    the cyclic collector runs again and again over the growing heap for nothing and takes
    more time than building them. It resumes (as it was) once they are built."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def fetch_messages(conn: sqlite3.Connection, session_id: str) -> list[Message]:
    rows = conn.execute(_LOAD_MESSAGES, (_DEFAULT_METADATA_JSON, session_id)).fetchall()
    if not rows:
        require_session(conn, session_id)
    with _collector_paused():
        return _MESSAGES.validate_json("[" + ",".join(row[0] for row in rows) + "]")


def fetch_usage(conn: sqlite3.Connection, session_id: str) -> list[UsageRecord]:
    rows = conn.execute(
        "SELECT created, model, kind, input_tokens, output_tokens, cache_read_tokens, "
        "cache_write_tokens, stop_reason FROM usage WHERE session_id = ? ORDER BY seq",
        (session_id,),
    ).fetchall()
    if not rows:
        require_session(conn, session_id)
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


def fetch_extension_data(conn: sqlite3.Connection, session_id: str) -> dict[str, Any]:
    row = conn.execute("SELECT extension_data FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        raise SessionNotFound(session_id)
    data: dict[str, Any] = json.loads(row[0])
    return data


def agent_view_changes(
    session_id: str,
    stored: Mapping[str, tuple[int, str, str]],
    messages: Sequence[Message],
) -> SessionChanges:
    """What to write so the stored agent view becomes that of `messages` (stored is
    `message_id -> (seq, content_json, metadata_json)`).

    New messages can only be appended, so every agent-visible stored message in `messages`
    must come before every agent-visible new one, in stored order. Stored messages missing
    from `messages` become agent-invisible; nothing is deleted.
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
        seq, stored_content, stored_metadata = stored[message.id]
        if content_json(message) != stored_content:
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
        if message.metadata.model_dump_json() != stored_metadata:
            metadata[message.id] = message.metadata
    for message_id, (_, _, stored_metadata) in stored.items():
        if message_id not in seen:
            old = MessageMetadata.model_validate_json(stored_metadata)
            if old.agent_visible:
                metadata[message_id] = old.with_agent_invisible()
    return SessionChanges(append=tuple(append), metadata=metadata)
