"""Saving a compaction result flips originals and appends summaries; nothing is deleted."""

from __future__ import annotations

import pytest

from gosling.conversation import Message, MessageMetadata, TextContent, ToolRequest, ToolResponse
from gosling.providers import Usage
from gosling.sessions import MessageConflict, SqliteSessionStore, UsageKind, UsageRecord


def _history() -> list[Message]:
    return [
        Message.user("list the files"),
        Message.assistant(None, ToolRequest(id="t1", name="shell", arguments={"cmd": "ls"})),
        Message.user(None, ToolResponse(id="t1", content=(TextContent(text="a.py"),))),
        Message.assistant("There is a.py."),
        Message.user("now read it"),
    ]


def _compacted(
    history: list[Message], summary_text: str = "summary: listed files"
) -> list[Message]:
    """What compaction produces: originals agent-invisible, then agent-only replacements."""
    ids = [m.id for m in history]
    summary = Message.user(summary_text).agent_only()
    continuation = Message.assistant("Your context was compacted").agent_only()
    preserved = Message.user("now read it")
    return [
        *(m.with_agent_invisible() for m in history),
        summary.with_kind("summary", ids),
        continuation.with_kind("continuation"),
        preserved,
    ]


def test_compaction_keeps_the_originals_and_changes_the_agent_view(
    store: SqliteSessionStore,
) -> None:
    session = store.create(working_dir="/w")
    history = _history()
    store.append_messages(session.id, history)
    result = _compacted(history)
    usage = UsageRecord(
        Usage(input_tokens=5000, output_tokens=200), model="m", kind=UsageKind.COMPACTION
    )
    store.replace_agent_view(session.id, result, usage=[usage], context_tokens=250)

    loaded = store.load_messages(session.id)
    assert loaded == result
    assert [m.text for m in loaded if m.is_agent_visible] == [
        "summary: listed files",
        "Your context was compacted",
        "now read it",
    ]
    assert [m.text for m in loaded if m.is_user_visible][:1] == ["list the files"]
    assert all(m.is_user_visible for m in loaded[: len(history)])
    assert store.get(session.id).tokens.context_tokens == 250
    assert store.get(session.id).message_count == len(result)


def test_compacting_twice_keeps_both_generations(store: SqliteSessionStore) -> None:
    session = store.create(working_dir="/w")
    history = _history()
    store.append_messages(session.id, history)
    first = _compacted(history)
    store.replace_agent_view(session.id, first)
    more = [Message.assistant("Reading."), Message.user("thanks")]
    store.append_messages(session.id, more)
    second = _compacted([*first, *more], "summary: read a.py")
    store.replace_agent_view(session.id, second)
    loaded = store.load_messages(session.id)
    assert len(loaded) == len(first) + len(more) + 3
    assert [m.text for m in loaded if m.is_agent_visible] == [
        "summary: read a.py",
        "Your context was compacted",
        "now read it",
    ]
    assert [m.text for m in loaded if m.metadata.kind == "summary"] == [
        "summary: listed files",
        "summary: read a.py",
    ]


def test_stored_messages_left_out_become_agent_invisible(store: SqliteSessionStore) -> None:
    session = store.create(working_dir="/w")
    history = _history()
    store.append_messages(session.id, history)
    summary = Message.user("summary").agent_only()
    store.replace_agent_view(session.id, [summary])
    loaded = store.load_messages(session.id)
    assert [m.id for m in loaded] == [*(m.id for m in history), summary.id]
    assert [m.id for m in loaded if m.is_agent_visible] == [summary.id]
    assert all(m.is_user_visible for m in loaded[:-1])


def test_changing_stored_content_is_refused(store: SqliteSessionStore) -> None:
    session = store.create(working_dir="/w")
    original = Message.user("original")
    store.append_messages(session.id, [original])
    for text in ("edited", "replaced"):  # whichever way the new content sorts
        edited = original.with_content([TextContent(text=text)])
        with pytest.raises(MessageConflict, match="new id"):
            store.replace_agent_view(session.id, [edited])
    assert store.load_messages(session.id) == [original]


def test_new_messages_cannot_be_placed_before_stored_ones(store: SqliteSessionStore) -> None:
    session = store.create(working_dir="/w")
    a, b = Message.user("a"), Message.assistant("b")
    store.append_messages(session.id, [a, b])
    with pytest.raises(MessageConflict, match="appended at the end"):
        store.replace_agent_view(session.id, [a, Message.user("inserted"), b])
    with pytest.raises(MessageConflict, match="stored order"):
        store.replace_agent_view(session.id, [b, a])
    assert store.load_messages(session.id) == [a, b]


def test_agent_invisible_copies_may_stay_anywhere(store: SqliteSessionStore) -> None:
    session = store.create(working_dir="/w")
    a, b = Message.user("a"), Message.assistant("b")
    store.append_messages(session.id, [a, b])
    note = Message.user("shown to the user only").user_only()
    store.replace_agent_view(session.id, [a, note, b])
    assert store.load_messages(session.id) == [a, b, note]
    assert store.load_messages(session.id)[2].metadata == MessageMetadata.user_only()
