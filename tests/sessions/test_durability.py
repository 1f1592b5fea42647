"""What the store promises beyond one happy writer: commits that reach the disk, writers that
queue instead of failing, constraint failures that are not called damage, ids never reused."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from gosling.conversation import Message
from gosling.providers import Usage
from gosling.sessions import CorruptStore, SqliteSessionStore, UsageRecord

# PRAGMA synchronous values as SQLite reports them.
_NORMAL, _FULL = 1, 2


@pytest.mark.parametrize(("asked", "expected"), [("normal", _NORMAL), ("full", _FULL)])
def test_commits_are_synced_as_asked(db_path: Path, asked: str, expected: int) -> None:
    """A power cut cannot be staged in a test; the sync level on the store's own connection is
    what decides whether an acknowledged turn survives one (OFF loses it, NORMAL keeps it past a
    process crash, FULL past power loss too)."""
    with SqliteSessionStore(db_path, synchronous=asked) as store:  # type: ignore[arg-type]
        [(level,)] = store._conn.execute("PRAGMA synchronous").fetchall()
        [(journal,)] = store._conn.execute("PRAGMA journal_mode").fetchall()
    assert (level, journal) == (expected, "wal")


def test_stores_creating_sessions_at_once_all_succeed(db_path: Path) -> None:
    """Several `gosling run` processes starting together each get a session: a write that
    only asks for the lock when it first writes fails at once with "database is locked" when
    another writer got in between, instead of waiting its turn."""
    SqliteSessionStore(db_path).close()
    writers, each = 4, 25
    made: list[str] = []
    failures: list[BaseException] = []
    start = threading.Barrier(writers)

    def run() -> None:
        with SqliteSessionStore(db_path) as store:
            start.wait()
            for _ in range(each):
                try:
                    made.append(store.create(working_dir="/w").id)
                except Exception as exc:
                    failures.append(exc)

    threads = [threading.Thread(target=run) for _ in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(set(made)) == writers * each
    with SqliteSessionStore(db_path) as store:
        assert len(store.list_sessions()) == writers * each


def test_a_constraint_failure_is_not_reported_as_a_damaged_store(db_path: Path) -> None:
    """A write the database refuses (here a rule another tool added to the file) must not be
    called corruption: that message tells the user to move the whole file aside, losing every
    session in it to fix one refused row."""
    with SqliteSessionStore(db_path) as store:
        session = store.create(working_dir="/w")
        store.append_messages(session.id, [Message.user("kept")])
    with sqlite3.connect(db_path) as conn:
        conn.execute(
            "CREATE TRIGGER refuse_usage BEFORE INSERT ON usage "
            "BEGIN SELECT RAISE(ABORT, 'usage refused'); END"
        )
    with SqliteSessionStore(db_path) as store:
        with pytest.raises(sqlite3.IntegrityError, match="usage refused") as caught:
            store.record_usage(session.id, UsageRecord(Usage(input_tokens=1, output_tokens=1)))
        assert not isinstance(caught.value, CorruptStore)
        assert store.check_integrity() == []
        assert [m.text for m in store.load_messages(session.id)] == ["kept"]
        assert store.usage_records(session.id) == []


def test_ids_are_not_reused_after_a_delete(store: SqliteSessionStore) -> None:
    """`gosling session resume ID` must never open a different conversation than the one the
    user saw under that id, and a new session must not fail because its id is taken."""
    first, second, third = (store.create(working_dir="/w") for _ in range(3))
    store.append_messages(third.id, [Message.user("third")])
    store.delete(first.id)
    store.delete(second.id)
    fresh = store.create(working_dir="/w")
    assert fresh.id not in {first.id, second.id, third.id}
    assert [m.text for m in store.load_messages(third.id)] == ["third"]
    assert store.load_messages(fresh.id) == []
