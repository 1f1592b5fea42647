"""Sessions keep every message exactly, in order, with metadata, and add up their usage."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gosling.conversation import (
    Content,
    ImageContent,
    Message,
    MessageMetadata,
    RedactedThinkingContent,
    SystemNotification,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
)
from gosling.providers import Usage
from gosling.sessions import (
    MessageConflict,
    SessionChanges,
    SessionNotFound,
    SqliteSessionStore,
    UsageKind,
    UsageRecord,
)

PARTS: list[Content] = [
    TextContent(text='héllo 世界 🎉 "quoted" \\ back'),
    ImageContent(data="aGVsbG8=", mime_type="image/jpeg"),
    ToolRequest(id="t1", name="developer__shell", arguments={"command": "ls", "n": [1, 2]}),
    ToolRequest(id="t2", name="broken", error="arguments were not valid JSON"),
    ToolResponse(
        id="t1", content=(TextContent(text="a\nb"), ImageContent(data="eA==")), is_error=True
    ),
    ThinkingContent(thinking="let me think", signature="sig"),
    RedactedThinkingContent(data="opaque"),
    SystemNotification(notification_type="thinking", msg="compacting"),
]

METADATA = [
    MessageMetadata(),
    MessageMetadata.agent_only(),
    MessageMetadata.user_only(),
    MessageMetadata.invisible(),
    MessageMetadata.agent_only().with_kind("summary", ["msg_a", "msg_b"]),
]


@pytest.mark.parametrize("part", PARTS, ids=lambda p: p.type)
@pytest.mark.parametrize("metadata", METADATA, ids=range(len(METADATA)))
def test_every_content_type_and_metadata_survive_a_reopen(
    db_path: Path, part: Content, metadata: MessageMetadata
) -> None:
    message = Message(role="assistant", content=(part,), metadata=metadata, id='id "odd" \\ ü')
    with SqliteSessionStore(db_path) as store:
        session = store.create(working_dir="/w")
        store.append_messages(session.id, [message])
    with SqliteSessionStore(db_path) as store:
        assert store.load_messages(session.id) == [message]


def test_messages_load_in_append_order(store: SqliteSessionStore) -> None:
    session = store.create(working_dir="/w")
    batches = [[Message.user(f"u{i}"), Message.assistant(f"a{i}")] for i in range(5)]
    for batch in batches:
        store.append_messages(session.id, batch)
    loaded = store.load_messages(session.id)
    assert [m.text for m in loaded] == [m.text for b in batches for m in b]
    assert store.get(session.id).message_count == 10


def test_sessions_are_listed_newest_first_with_their_details(store: SqliteSessionStore) -> None:
    first = store.create(working_dir="/a", name="first", provider="anthropic", model="m1")
    second = store.create(working_dir="/b", name="second")
    store.append_messages(first.id, [Message.user("hi")])  # now the most recently used
    store.record_usage(first.id, UsageRecord(Usage(input_tokens=120, output_tokens=30)))
    listed = store.list_sessions()
    assert [s.id for s in listed] == [first.id, second.id]
    top = listed[0]
    assert (top.name, top.working_dir, top.provider, top.model) == (
        "first",
        Path("/a"),
        "anthropic",
        "m1",
    )
    assert top.message_count == 1
    assert top.tokens.total_tokens == 150
    assert top.updated_at >= second.updated_at
    assert [s.id for s in store.list_sessions(limit=1)] == [first.id]


def test_new_sessions_get_distinct_ids(store: SqliteSessionStore) -> None:
    ids = {store.create(working_dir="/w").id for _ in range(5)}
    assert len(ids) == 5


def test_rename_and_update_session(store: SqliteSessionStore) -> None:
    session = store.create(working_dir="/w", provider="openai", model="gpt")
    renamed = store.rename(session.id, "fix the parser")
    assert (renamed.name, renamed.name_set_by_user) == ("fix the parser", True)
    moved = store.update_session(session.id, working_dir="/elsewhere", model="gpt-mini")
    assert (moved.working_dir, moved.provider, moved.model) == (
        Path("/elsewhere"),
        "openai",
        "gpt-mini",
    )


def test_delete_removes_the_session_and_its_messages(store: SqliteSessionStore) -> None:
    keep = store.create(working_dir="/w")
    gone = store.create(working_dir="/w")
    store.append_messages(gone.id, [Message.user("bye")])
    store.append_messages(keep.id, [Message.user("stay")])
    store.delete(gone.id)
    assert [s.id for s in store.list_sessions()] == [keep.id]
    with pytest.raises(SessionNotFound, match="gosling sessions list"):
        store.load_messages(gone.id)
    assert [m.text for m in store.load_messages(keep.id)] == ["stay"]


def test_deleting_a_session_removes_its_lock_file(db_path: Path, store: SqliteSessionStore) -> None:
    keep = store.create(working_dir="/w")
    gone = store.create(working_dir="/w")
    store.append_messages(keep.id, [Message.user("stay")])
    store.append_messages(gone.id, [Message.user("bye")])
    locks = db_path.with_name(db_path.name + ".locks")
    assert sorted(p.name for p in locks.iterdir()) == sorted([f"{keep.id}.lock", f"{gone.id}.lock"])
    store.delete(gone.id)
    assert [p.name for p in locks.iterdir()] == [f"{keep.id}.lock"]


def test_unknown_session_ids_are_reported(store: SqliteSessionStore) -> None:
    for call in (
        lambda: store.get("nope"),
        lambda: store.rename("nope", "x"),
        lambda: store.append_messages("nope", [Message.user("x")]),
        lambda: store.delete("nope"),
        lambda: store.get_extension_data("nope"),
    ):
        with pytest.raises(SessionNotFound, match="'nope'"):
            call()


def test_visibility_flips_change_only_metadata(store: SqliteSessionStore) -> None:
    session = store.create(working_dir="/w")
    a, b, c = Message.user("a"), Message.assistant("b"), Message.user("c")
    store.append_messages(session.id, [a, b, c])
    store.update_message_metadata(session.id, a.id, MessageMetadata.user_only())
    store.update_messages_metadata(
        session.id, {b.id: MessageMetadata.invisible(), c.id: MessageMetadata.agent_only()}
    )
    loaded = store.load_messages(session.id)
    assert [m.metadata for m in loaded] == [
        MessageMetadata.user_only(),
        MessageMetadata.invisible(),
        MessageMetadata.agent_only(),
    ]
    assert [m.model_copy(update={"metadata": MessageMetadata()}) for m in loaded] == [a, b, c]


def test_flipping_an_unknown_message_changes_nothing(store: SqliteSessionStore) -> None:
    session = store.create(working_dir="/w")
    a = Message.user("a")
    store.append_messages(session.id, [a])
    with pytest.raises(MessageConflict, match="no message 'ghost'"):
        store.update_messages_metadata(
            session.id, {a.id: MessageMetadata.invisible(), "ghost": MessageMetadata()}
        )
    assert store.load_messages(session.id) == [a]


def test_a_failing_commit_writes_nothing(store: SqliteSessionStore) -> None:
    session = store.create(working_dir="/w")
    old = Message.user("old")
    store.append_messages(session.id, [old])
    before = store.get(session.id)
    changes = SessionChanges(
        append=(Message.assistant("new"), old),  # the second reuses a stored id
        usage=(UsageRecord(Usage(input_tokens=5, output_tokens=1)),),
    )
    with pytest.raises(MessageConflict, match="with_new_id"):
        store.commit(session.id, changes)
    assert store.load_messages(session.id) == [old]
    assert store.usage_records(session.id) == []
    assert store.get(session.id) == before


def test_usage_ledger_and_totals(store: SqliteSessionStore) -> None:
    session = store.create(working_dir="/w")
    normal = UsageRecord(
        Usage(input_tokens=1000, output_tokens=50, cache_read_tokens=800, cache_write_tokens=100),
        model="claude",
    )
    compaction = UsageRecord(
        Usage(input_tokens=1200, output_tokens=300), model="claude-fast", kind=UsageKind.COMPACTION
    )
    store.record_usage(session.id, normal)
    store.commit(session.id, SessionChanges(usage=(compaction,), context_tokens=400))
    summary = UsageRecord(Usage(), kind=UsageKind.SUMMARY)
    store.record_usage(session.id, summary)
    assert store.usage_records(session.id) == [normal, compaction, summary]
    tokens = store.get(session.id).tokens
    assert tokens.context_tokens == 400  # what compaction kept, not the compaction's input
    assert (tokens.input_tokens, tokens.output_tokens) == (2200, 350)
    assert (tokens.cache_read_tokens, tokens.cache_write_tokens) == (800, 100)
    assert tokens.model_calls == 3


def test_a_summary_call_does_not_move_the_context_size(store: SqliteSessionStore) -> None:
    session = store.create(working_dir="/w")
    store.record_usage(session.id, UsageRecord(Usage(input_tokens=900, output_tokens=9)))
    store.record_usage(
        session.id, UsageRecord(Usage(input_tokens=50, output_tokens=5), kind=UsageKind.SUMMARY)
    )
    assert store.get(session.id).tokens.context_tokens == 900


def test_extension_data_is_stored_per_session(store: SqliteSessionStore) -> None:
    one = store.create(working_dir="/w")
    two = store.create(working_dir="/w")
    todo = [{"content": "write tests", "status": "in_progress"}]
    store.set_extension_data(one.id, "todo", todo)
    store.set_extension_data(one.id, "enabled", ["developer"])
    assert store.get_extension_data(one.id) == {"todo": todo, "enabled": ["developer"]}
    assert store.get_extension_data(two.id) == {}
    store.set_extension_data(one.id, "todo", None)
    assert store.get_extension_data(one.id) == {"enabled": ["developer"]}
    with pytest.raises(ValueError, match="plain JSON"):
        store.set_extension_data(one.id, "bad", {1, 2})


def test_store_file_and_directory_are_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with SqliteSessionStore.open_default(data) as store:
        store.create(working_dir="/w")
    assert data.stat().st_mode & 0o777 == 0o700
    assert (data / "sessions.db").stat().st_mode & 0o077 == 0


def test_a_state_dir_whose_parents_do_not_exist_yet_is_made(tmp_path: Path) -> None:
    data = tmp_path / "fresh-home" / ".local" / "share" / "gosling"
    with SqliteSessionStore.open_default(data) as store:
        session = store.create(working_dir="/w")
    with SqliteSessionStore.open_default(data) as again:  # and opened again as it is
        assert str(again.get(session.id).working_dir) == "/w"
    assert data.stat().st_mode & 0o777 == 0o700


def test_database_settings(db_path: Path) -> None:
    SqliteSessionStore(db_path).close()
    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        versions = [row[0] for row in conn.execute("SELECT version FROM schema_version")]
        assert versions == [1]
    finally:
        conn.close()


def test_threads_can_share_one_store(store: SqliteSessionStore) -> None:
    from concurrent.futures import ThreadPoolExecutor

    session = store.create(working_dir="/w")

    def write(n: int) -> list[str]:
        batch = [Message.user(f"{n}-{i}") for i in range(20)]
        for message in batch:
            store.append_messages(session.id, [message])
        store.load_messages(session.id)
        return [m.id for m in batch]

    with ThreadPoolExecutor(max_workers=4) as pool:
        written = [i for ids in pool.map(write, range(4)) for i in ids]
    assert sorted(m.id for m in store.load_messages(session.id)) == sorted(written)
