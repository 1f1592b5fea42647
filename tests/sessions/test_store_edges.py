"""The sessions store at its edges: a store another program holds locked, the privacy of the
data directory, and a damaged index that `check_integrity` must report."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gosling.sessions import SqliteSessionStore
from gosling.sessions.errors import CorruptStore, StoreUnusable
from tests.sessions.other_program import holding_write_lock


def test_a_store_held_locked_by_another_program_is_not_called_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    # A rollback-journal database, locked for writing.
    with holding_write_lock(path, "BEGIN EXCLUSIVE"), pytest.raises(StoreUnusable) as raised:
        SqliteSessionStore(path, busy_timeout=0.05)
    assert not isinstance(raised.value, CorruptStore)
    assert "database is locked" in str(raised.value)
    assert "Check that you can read and write the file" in str(raised.value)
    store = SqliteSessionStore(path)  # once released, the same file opens
    store.close()


@pytest.mark.parametrize("mode", [0o755, 0o750, 0o701, 0o770, 0o644, 0o600])
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


def test_a_file_where_the_data_directory_should_be_is_one_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("not a directory")
    with pytest.raises(StoreUnusable) as raised:
        SqliteSessionStore.open_default(blocker / "gosling")
    # it names the file in the way, not the directory it was making
    assert f"its directory cannot be made (Not a directory: {blocker})" in str(raised.value)
    assert "move what is in the way aside" in str(raised.value)


def test_a_gosling_home_that_is_a_dangling_link_is_named_as_what_is_in_the_way(
    tmp_path: Path,
) -> None:
    home = tmp_path / "gosling-home"  # a link left to a drive that is not mounted
    home.symlink_to(tmp_path / "unmounted" / "gosling")
    with pytest.raises(StoreUnusable) as raised:
        SqliteSessionStore.open_default(home / "data")
    assert f"its directory cannot be made (File exists: {home})" in str(raised.value)
    assert home.is_symlink() and not (tmp_path / "unmounted").exists()  # left as it was


def test_a_file_that_is_no_database_is_named_so(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.write_bytes(b"these bytes are no SQLite header, " * 200)
    with pytest.raises(CorruptStore) as raised:
        SqliteSessionStore(path)
    assert "it is not an SQLite database" in str(raised.value)
    assert path.read_bytes().startswith(b"these bytes")  # left untouched


def test_a_restored_session_keeps_its_times_provider_model_and_counts(tmp_path: Path) -> None:
    from gosling.conversation import Message
    from gosling.sessions import SessionSnapshot

    store = SqliteSessionStore(tmp_path / "sessions.db")
    snapshot = SessionSnapshot(
        name="old work",
        working_dir=tmp_path / "proj",
        messages=[Message.user("hi"), Message.assistant("hello")],
        provider="anthropic",
        model="claude-x",
        created_at=1_700_000_000.0,
        updated_at=1_700_000_500.0,
        name_set_by_user=True,
    )
    restored = store.restore(snapshot)
    for session in (store.get(restored.id), store.list_sessions()[0]):
        assert (session.name, session.provider, session.model) == (
            "old work",
            "anthropic",
            "claude-x",
        )
        assert session.working_dir == tmp_path / "proj"
        assert (session.created_at, session.updated_at) == (1_700_000_000.0, 1_700_000_500.0)
        assert session.message_count == 2 and session.name_set_by_user
    store.close()


def test_a_restored_session_keeps_its_id_only_when_well_formed_and_free(tmp_path: Path) -> None:
    from gosling.conversation import Message
    from gosling.sessions import SessionSnapshot

    def wish(session_id: str) -> SessionSnapshot:
        return SessionSnapshot(
            id=session_id, name="sent", working_dir=tmp_path, messages=[Message.user("hi")]
        )

    locks = tmp_path / "data" / "sessions.db.locks"
    with SqliteSessionStore(tmp_path / "data" / "sessions.db") as store:
        assert store.restore(wish("20200102_7")).id == "20200102_7"
        assert store.restore(wish("20200102_7")).id != "20200102_7"  # taken
        # An id from a file someone sent never names a lock file outside the locks directory.
        for wished in ("../../outside", "", "-rf", "two words", "x" * 200):
            restored = store.restore(wish(wished))
            assert restored.id != wished
            store.open_for_writing(restored.id)
            assert (locks / f"{restored.id}.lock").is_file()
    assert not (tmp_path / "outside.lock").exists()


def test_a_store_written_by_a_newer_gosling_is_refused_untouched(tmp_path: Path) -> None:
    from gosling.sessions.errors import SchemaTooNew
    from gosling.sessions.schema import LATEST_VERSION

    path = tmp_path / "sessions.db"
    SqliteSessionStore(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "INSERT INTO schema_version (version, applied_at) VALUES (?, 0)", (LATEST_VERSION + 1,)
    )
    conn.close()
    before = path.read_bytes()
    with pytest.raises(SchemaTooNew) as raised:
        SqliteSessionStore(path)
    assert f"its schema version is {LATEST_VERSION + 1}" in str(raised.value)
    assert "Upgrade gosling" in str(raised.value)
    assert path.read_bytes() == before
    SqliteSessionStore(tmp_path / "current.db").close()  # the current version opens


def test_session_ids_count_up_through_the_day_and_never_collide_after_a_delete(
    tmp_path: Path,
) -> None:
    store = SqliteSessionStore(tmp_path / "sessions.db")
    first, second, third = (store.create(working_dir=tmp_path) for _ in range(3))
    day = first.id.split("_")[0]
    assert [first.id, second.id, third.id] == [f"{day}_1", f"{day}_2", f"{day}_3"]
    store.delete(second.id)
    fourth = store.create(working_dir=tmp_path)
    assert fourth.id == f"{day}_4"
    assert {s.id for s in store.list_sessions()} == {first.id, third.id, fourth.id}
    more = [store.create(working_dir=tmp_path).id for _ in range(9)]  # past two digits
    assert more[-2:] == [f"{day}_12", f"{day}_13"]
    assert len(store.list_sessions()) == 12
    store.close()


def test_asking_about_a_session_that_does_not_exist_says_so(tmp_path: Path) -> None:
    from gosling.sessions import SessionNotFound

    store = SqliteSessionStore(tmp_path / "sessions.db")
    kept = store.create(working_dir=tmp_path)
    for read in (store.usage_records, store.load_messages, store.get_extension_data):
        with pytest.raises(SessionNotFound):
            read("20990101_1")
        read(kept.id)  # an existing session with nothing in it is no error
    store.close()


def test_a_snapshot_repeating_a_message_id_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    from gosling.conversation import Message
    from gosling.sessions import MessageConflict, SessionSnapshot

    store = SqliteSessionStore(tmp_path / "sessions.db")
    hello = Message.user("hello")
    snapshot = SessionSnapshot(name="dup", working_dir=tmp_path, messages=[hello, hello])
    with pytest.raises(MessageConflict, match="repeats a message id"):
        store.restore(snapshot)
    assert store.list_sessions() == []
    store.close()


def test_a_damaged_page_is_reported_by_the_integrity_check(tmp_path: Path) -> None:
    from gosling.conversation import Message
    from gosling.sessions import SessionSnapshot

    path = tmp_path / "sessions.db"
    store = SqliteSessionStore(path)
    long = [Message.user(f"{n:03} " + "x" * 10_000) for n in range(12)]  # overflow pages
    store.restore(SessionSnapshot(name="big", working_dir=tmp_path, messages=long))
    store.close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.close()
    with path.open("r+b") as raw:  # scribble over the last page: a message's overflow page
        raw.seek(page_size * (pages - 1))
        raw.write(b"\xff" * page_size)
    store = SqliteSessionStore(path)
    problems = store.check_integrity()
    store.close()
    assert problems, "a scribbled page must not pass as sound"


def test_an_empty_file_where_the_store_should_be_becomes_a_new_store(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.touch()  # left by a crash before the first write, or by `touch`
    store = SqliteSessionStore(path)
    session = store.create(working_dir=tmp_path, name="first")
    assert [s.name for s in store.list_sessions()] == ["first"] and session.id
    store.close()


def test_a_damaged_schema_page_is_named_as_damage_not_as_another_kind_of_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sessions.db"
    SqliteSessionStore(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xa5" * (4096 - 100)  # the schema's page, its 100-byte header kept
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptStore) as raised:
        SqliteSessionStore(path)
    assert "it is not an SQLite database" not in str(raised.value)
    assert "malformed" in str(raised.value)


def test_a_store_name_the_system_refuses_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / ("s" * 300 + ".db")  # longer than any file name the system allows
    with pytest.raises(StoreUnusable) as raised:
        SqliteSessionStore(path)
    assert "File name too long" in str(raised.value)
    assert "Point GOSLING_HOME" in str(raised.value)


def test_a_store_file_that_cannot_be_made_is_one_clear_error(tmp_path: Path) -> None:
    from gosling.sessions import StoreUnwritable

    path = tmp_path / "sessions.db"  # a link left to a drive that is not mounted
    path.symlink_to(tmp_path / "unmounted" / "gosling" / "sessions.db")
    with pytest.raises(StoreUnwritable) as raised:
        SqliteSessionStore(path)
    assert "No such file or directory" in str(raised.value)
    assert "Check that the disk has space and is writable" in str(raised.value)


def test_an_sqlite_file_without_tables_gets_the_schema(tmp_path: Path) -> None:
    from gosling.conversation import Message

    path = tmp_path / "sessions.db"
    made = sqlite3.connect(path)  # made by another tool: a database, but no tables yet
    made.execute("PRAGMA user_version = 0")
    made.execute("CREATE TABLE scratch (x)")
    made.execute("DROP TABLE scratch")
    made.commit()
    made.close()
    assert path.stat().st_size > 0
    with SqliteSessionStore(path) as store:
        session = store.create(working_dir="/w")
        store.append_messages(session.id, [Message.user("kept")])
    with SqliteSessionStore(path) as store:
        assert [m.text for m in store.load_messages(session.id)] == ["kept"]
