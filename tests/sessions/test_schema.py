"""A database gosling cannot use is reported clearly and left byte-for-byte as it was."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import pytest

from gosling.conversation import Message
from gosling.sessions import (
    LATEST_VERSION,
    CorruptStore,
    SchemaTooNew,
    SqliteSessionStore,
    StoreUnusable,
)
from tests.sessions.other_program import holding_write_lock


def _fingerprint(directory: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.iterdir())
        if p.is_file()
    }


def _populated(db_path: Path) -> str:
    with SqliteSessionStore(db_path) as store:
        session = store.create(working_dir="/w", name="keep me")
        store.append_messages(session.id, [Message.user("precious")])
    return session.id


def test_a_newer_schema_is_refused_and_left_untouched(db_path: Path) -> None:
    session_id = _populated(db_path)
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute(
            "INSERT INTO schema_version (version, applied_at) VALUES (?, 0)", (LATEST_VERSION + 1,)
        )
    conn.close()
    before = _fingerprint(db_path.parent)

    with pytest.raises(SchemaTooNew) as caught:
        SqliteSessionStore(db_path)

    message = str(caught.value)
    assert str(db_path) in message
    assert f"schema version is {LATEST_VERSION + 1}" in message
    assert "Upgrade gosling" in message
    assert "not modified" in message
    assert _fingerprint(db_path.parent) == before
    conn = sqlite3.connect(db_path)
    assert conn.execute("SELECT id FROM sessions").fetchone()[0] == session_id
    conn.close()


@pytest.mark.parametrize(
    "content",
    [
        b"this is a text file, not a database\n" * 40,
        b"SQLite format 3\x00" + os.urandom(8192),
        b"SQL",
    ],
    ids=["text", "sqlite-header-then-garbage", "truncated"],
)
def test_a_corrupt_file_is_refused_and_left_untouched(db_path: Path, content: bytes) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(content)
    before = _fingerprint(db_path.parent)
    with pytest.raises(CorruptStore) as caught:
        SqliteSessionStore(db_path)
    message = str(caught.value)
    assert str(db_path) in message
    assert "Move it aside" in message
    assert _fingerprint(db_path.parent) == before


def test_a_damaged_database_is_refused_and_left_untouched(db_path: Path) -> None:
    _populated(db_path)
    data = db_path.read_bytes()
    page_size = int.from_bytes(data[16:18], "big")
    broken = bytearray(data)
    broken[page_size : page_size * 2] = os.urandom(page_size)  # smash the second page
    db_path.write_bytes(bytes(broken))
    before = _fingerprint(db_path.parent)
    with pytest.raises(CorruptStore, match="not modified"), SqliteSessionStore(db_path) as store:
        store.list_sessions()
    assert _fingerprint(db_path.parent) == before


def test_another_programs_database_is_refused(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
    conn.close()
    before = _fingerprint(db_path.parent)
    with pytest.raises(CorruptStore, match="not a gosling sessions database"):
        SqliteSessionStore(db_path)
    assert _fingerprint(db_path.parent) == before


def test_reopening_does_not_migrate_twice(db_path: Path) -> None:
    session_id = _populated(db_path)
    with SqliteSessionStore(db_path) as store:
        assert store.load_messages(session_id)[0].text == "precious"
    conn = sqlite3.connect(db_path)
    assert conn.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0] == LATEST_VERSION
    conn.close()


def test_damage_found_while_reading_names_the_file(db_path: Path) -> None:
    with SqliteSessionStore(db_path) as store:
        session = store.create(working_dir="/w")
        store.append_messages(session.id, [Message.user("x" * 3000) for _ in range(40)])
    data = bytearray(db_path.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    for page in range(12, len(data) // page_size):  # the message pages, past the schema's
        data[page * page_size : (page + 1) * page_size] = b"\xff" * page_size
    db_path.write_bytes(bytes(data))
    with SqliteSessionStore(db_path) as store, pytest.raises(CorruptStore) as caught:
        store.load_messages(session.id)
    assert str(db_path) in str(caught.value)
    assert "gosling sessions export" in str(caught.value)


def test_a_directory_in_place_of_the_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "sessions.db").mkdir()
    with pytest.raises(StoreUnusable, match="cannot be read"):
        SqliteSessionStore(tmp_path / "sessions.db")


def test_a_newer_schema_is_refused_at_once_while_another_program_writes_to_it(
    db_path: Path,
) -> None:
    """The newer gosling that wrote the file is mid-commit: the older one still says what is
    wrong (and waits for nothing) rather than reporting a locked database."""
    _populated(db_path)
    upgrade = (
        "INSERT INTO schema_version (version, applied_at) VALUES (?, 0)",
        (LATEST_VERSION + 1,),
    )
    with holding_write_lock(db_path, first=[upgrade]), pytest.raises(SchemaTooNew) as caught:
        SqliteSessionStore(db_path, busy_timeout=0)
    assert "Upgrade gosling" in str(caught.value)


@pytest.mark.parametrize(
    ("kept", "remedy"),
    [
        ((), "Move it aside"),
        (("CREATE TABLE schema_version (version INTEGER PRIMARY KEY)",), "gosling sessions export"),
    ],
    ids=["nothing in it", "a gosling schema never finished"],
)
def test_a_database_to_migrate_with_damaged_free_pages_is_refused_untouched(
    db_path: Path, kept: tuple[str, ...], remedy: str
) -> None:
    """Another tool's database with its tables dropped reads as empty (or one whose schema was
    never recorded as made), so it would be migrated; making the tables needs the damaged free
    pages. It is refused before anything is written (switching to WAL alone rewrites the
    header), with the fix that fits what it holds."""
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path)
    for statement in kept:
        conn.execute(statement)
    with conn:
        conn.execute("CREATE TABLE scratch (x)")
        conn.executemany("INSERT INTO scratch VALUES (?)", [("x" * 3000,) for _ in range(20)])
    with conn:
        conn.execute("DROP TABLE scratch")
    conn.close()
    data = bytearray(db_path.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    trunk = int.from_bytes(data[32:36], "big")  # the first page of the free list
    assert trunk > 1
    data[(trunk - 1) * page_size : trunk * page_size] = b"\xff" * page_size
    db_path.write_bytes(bytes(data))

    before = _fingerprint(db_path.parent)

    with pytest.raises(CorruptStore) as caught:
        SqliteSessionStore(db_path)
    message = str(caught.value)
    assert str(db_path) in message
    assert "damaged (Main freelist:" in message
    assert remedy in message and "The file was not modified." in message
    assert _fingerprint(db_path.parent) == before
