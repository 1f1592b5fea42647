"""The sessions store at its edges: a store another program holds locked, the privacy of the
data directory, and a damaged index that `check_integrity` must report."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gosling.sessions import SqliteSessionStore
from gosling.sessions.errors import CorruptStore, StoreUnusable


def test_a_store_held_locked_by_another_program_is_not_called_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # a rollback-journal database, locked for writing
    try:
        with pytest.raises(StoreUnusable) as raised:
            SqliteSessionStore(path, busy_timeout=0.05)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert not isinstance(raised.value, CorruptStore)
    assert "database is locked" in str(raised.value)
    assert "Check that you can read and write the file" in str(raised.value)
    store = SqliteSessionStore(path)  # once released, the same file opens
    store.close()


@pytest.mark.parametrize("mode", [0o755, 0o750, 0o701, 0o770])
def test_the_data_directory_is_made_private(tmp_path: Path, mode: int) -> None:
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(mode)
    SqliteSessionStore.open_default(data).close()
    assert data.stat().st_mode & 0o777 == 0o700


def test_a_damaged_index_is_reported_by_the_integrity_check(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store = SqliteSessionStore(path)
    for n in range(3):
        store.create(working_dir=tmp_path, name=f"s{n}")
    assert store.check_integrity() == []
    store.close()
    # Point the index at another column behind SQLite's back: its entries no longer match.
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute(
        "UPDATE sqlite_master SET sql = 'CREATE INDEX sessions_by_update ON sessions (name)' "
        "WHERE name = 'sessions_by_update'"
    )
    conn.close()
    store = SqliteSessionStore(path)
    problems = store.check_integrity()
    store.close()
    assert problems and all("sessions_by_update" in p for p in problems)
