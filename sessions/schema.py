"""The database schema and its forward-only migrations.

`schema_version` holds one row per applied migration. Migrations run inside one
`BEGIN IMMEDIATE` transaction, so two processes starting at once cannot both apply them, and a
crash mid-migration leaves the previous version intact. Before anything is written the file is
probed read-only: a corrupt file, a foreign database or a schema newer than this code is
reported and left exactly as it was.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from gosling.sessions.errors import MOVE_ASIDE, SALVAGE, CorruptStore, SchemaTooNew, StoreUnusable


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "sessions, messages, usage ledger",
        (
            """CREATE TABLE sessions (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL DEFAULT '',
                name_set_by_user INTEGER NOT NULL DEFAULT 0,
                working_dir TEXT NOT NULL,
                provider TEXT,
                model TEXT,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                message_count INTEGER NOT NULL DEFAULT 0,
                context_tokens INTEGER,
                input_tokens INTEGER NOT NULL DEFAULT 0,
                output_tokens INTEGER NOT NULL DEFAULT 0,
                cache_read_tokens INTEGER NOT NULL DEFAULT 0,
                cache_write_tokens INTEGER NOT NULL DEFAULT 0,
                model_calls INTEGER NOT NULL DEFAULT 0,
                extension_data TEXT NOT NULL DEFAULT '{}'
            )""",
            "CREATE INDEX sessions_by_update ON sessions (updated_at)",
            """CREATE TABLE messages (
                seq INTEGER PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                message_id TEXT NOT NULL,
                role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
                created INTEGER NOT NULL,
                content_json TEXT NOT NULL,
                metadata_json TEXT NOT NULL,
                UNIQUE (session_id, message_id)
            )""",
            "CREATE INDEX messages_in_order ON messages (session_id, seq)",
            """CREATE TABLE usage (
                seq INTEGER PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                created REAL NOT NULL,
                model TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('normal', 'compaction', 'summary')),
                input_tokens INTEGER,
                output_tokens INTEGER,
                cache_read_tokens INTEGER NOT NULL DEFAULT 0,
                cache_write_tokens INTEGER NOT NULL DEFAULT 0,
                stop_reason TEXT
            )""",
            "CREATE INDEX usage_in_order ON usage (session_id, seq)",
        ),
    ),
)

LATEST_VERSION = MIGRATIONS[-1].version


def read_only_uri(path: Path) -> str:
    """A URI that opens the file without writing anything, side files included.

    Without a -wal file there is nothing but the main file to read: `immutable` then reads it
    without creating -wal/-shm side files. With one, read-only mode must consult it.
    """
    wal = path.with_name(path.name + "-wal")
    return path.resolve().as_uri() + ("?mode=ro" if wal.exists() else "?immutable=1")


def probe(path: Path) -> int:
    """Refuse, without writing, a file that is not a gosling sessions database we can use;
    return its schema version (0: no file yet, or no schema). A plain read: no write lock,
    so in WAL mode it never waits for a writer."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    except OSError as exc:  # a name too long, a loop of links, an unreadable directory
        raise StoreUnusable(
            path,
            f"it cannot be looked at ({exc.strerror or exc})",
            "Point GOSLING_HOME (or XDG_DATA_HOME) at a directory you can read and write.",
        ) from exc
    if size == 0:
        return 0
    # Never open the file other than through SQLite: closing any descriptor of it drops
    # every POSIX lock this process holds on it, the locks of another store's connection
    # included, and another process would then take the WAL for unused and delete it.
    if path.is_dir():
        raise StoreUnusable(
            path, "it cannot be read (it is a directory)", "Move the directory aside."
        )
    if not os.access(path, os.R_OK):
        raise StoreUnusable(path, "it cannot be read", "Check the file's permissions.")
    try:
        conn = sqlite3.connect(read_only_uri(path), uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise CorruptStore(path, f"SQLite cannot open it ({exc})", MOVE_ASIDE) from exc
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        if tables and "schema_version" not in tables:
            raise CorruptStore(
                path,
                "it is an SQLite database, but not a gosling sessions database",
                "Point GOSLING_HOME elsewhere or move the file aside.",
            )
        found = 0
        if tables:
            found = int(conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 0)
        if found > LATEST_VERSION:
            raise SchemaTooNew(path, found, LATEST_VERSION)
        if found < LATEST_VERSION:
            _refuse_damage_before_migrating(conn, path, empty=not tables)
        return found
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_NOTADB:
            raise CorruptStore(path, "it is not an SQLite database", MOVE_ASIDE) from exc
        raise CorruptStore(path, f"SQLite cannot read it ({exc})", MOVE_ASIDE) from exc
    finally:
        conn.close()


def _refuse_damage_before_migrating(conn: sqlite3.Connection, path: Path, empty: bool) -> None:
    """Migrating writes (the WAL switch rewrites the header before the schema is made), so a
    file that is to be migrated is checked first: damage found later would leave it changed."""
    problems = [row[0] for row in conn.execute("PRAGMA quick_check(3)")]
    if problems == ["ok"]:
        return
    lines = [line for text in problems for line in text.splitlines() if not line.startswith("***")]
    remedy = MOVE_ASIDE if empty else SALVAGE
    raise CorruptStore(path, f"SQLite finds it damaged ({'; '.join(lines[:3])})", remedy)


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the schema to `LATEST_VERSION` in one immediate transaction. Called only when
    `probe` found an older one (a current schema, every open but the first, takes no write
    lock: opening a store never waits for another process's write)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        has_table = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        current = 0
        if has_table:
            current = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 0
        if current > LATEST_VERSION:
            raise SchemaTooNew(path, current, LATEST_VERSION)
        if current < LATEST_VERSION:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version ("
                "version INTEGER PRIMARY KEY, applied_at REAL NOT NULL, description TEXT)"
            )
            for migration in MIGRATIONS:
                if migration.version <= current:
                    continue
                for statement in migration.statements:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_version (version, applied_at, description) "
                    "VALUES (?, ?, ?)",
                    (migration.version, time.time(), migration.description),
                )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
