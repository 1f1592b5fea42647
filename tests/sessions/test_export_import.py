"""JSON Lines export round-trips a session losslessly; Markdown shows what the user saw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gosling.conversation import (
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
    ImportFailed,
    SessionSnapshot,
    SqliteSessionStore,
    UsageKind,
    UsageRecord,
    export_session,
    import_jsonl,
    import_session,
    parse_session_text,
    register_importer,
)
from gosling.sessions import importing as importing_module


def _rich_session(store: SqliteSessionStore) -> str:
    session = store.create(working_dir="/src/app", name="refactor", provider="openai", model="gpt")
    call = ToolRequest(id="t1", name="developer__shell", arguments={"command": "ls -la"})
    long_output = "\n".join(f"file{i}.py" for i in range(40))
    messages = [
        Message.user("tidy up the repo"),
        Message.assistant(
            "Looking.",
            ThinkingContent(thinking="private reasoning", signature="s"),
            RedactedThinkingContent(data="opaque"),
            call,
        ),
        Message.user(None, ToolResponse(id="t1", content=(TextContent(text=long_output),))),
        Message.assistant(None, SystemNotification(msg="compacting")).user_only(),
        Message.user("agent-only summary text").agent_only().with_kind("summary", ["x"]),
        Message.user("see", ImageContent(data="aGk=", mime_type="image/jpeg")),
        Message.assistant("hidden everywhere").with_metadata(MessageMetadata.invisible()),
    ]
    store.append_messages(session.id, messages)
    store.record_usage(
        session.id,
        UsageRecord(Usage(input_tokens=900, output_tokens=40, cache_read_tokens=100), model="gpt"),
    )
    store.record_usage(
        session.id,
        UsageRecord(Usage(input_tokens=950, output_tokens=60), kind=UsageKind.COMPACTION),
    )
    store.set_extension_data(session.id, "todo", [{"content": "tidy", "status": "done"}])
    return session.id


def test_jsonl_round_trip_is_lossless(tmp_path: Path) -> None:
    with SqliteSessionStore(tmp_path / "a.db") as source:
        session_id = _rich_session(source)
        exported = export_session(source, session_id, "jsonl")
        original = source.snapshot(session_id)
    path = tmp_path / "session.jsonl"
    path.write_text(exported)
    with SqliteSessionStore(tmp_path / "b.db") as target:
        imported = import_jsonl(target, path)
        copy = target.snapshot(imported.id)
        assert imported.id == session_id  # free in the new store, so kept
        assert copy == original
        assert export_session(target, imported.id, "jsonl") == exported


def test_importing_into_the_same_store_gets_a_new_id(store: SqliteSessionStore) -> None:
    session_id = _rich_session(store)
    text = export_session(store, session_id, "jsonl")
    snapshot = parse_session_text(text, "test")
    again = store.restore(snapshot)
    assert again.id != session_id
    assert store.load_messages(again.id) == store.load_messages(session_id)
    assert store.get(again.id).tokens == store.get(session_id).tokens
    assert len(store.list_sessions()) == 2


def test_jsonl_layout(store: SqliteSessionStore) -> None:
    session_id = _rich_session(store)
    lines = [json.loads(line) for line in export_session(store, session_id).splitlines()]
    assert lines[0]["type"] == "session"
    assert lines[0]["format"] == "gosling-session"
    assert [line["type"] for line in lines[1:]] == ["message"] * 7 + ["usage"] * 2
    assert lines[5]["message"]["metadata"]["kind"] == "summary"
    assert lines[-1]["kind"] == "compaction"


def test_markdown_shows_what_the_user_saw(store: SqliteSessionStore) -> None:
    session_id = _rich_session(store)
    text = export_session(store, session_id, "markdown")
    assert text.startswith("# refactor\n")
    assert "tidy up the repo" in text
    assert '**→ `developer__shell`** `{"command": "ls -la"}`' in text
    assert "file0.py" in text and "file39.py" not in text and "more lines" in text
    assert "> _compacting_" in text
    assert "[image: image/jpeg]" in text
    for hidden in ("agent-only summary text", "hidden everywhere", "private reasoning"):
        assert hidden not in text


def test_unreadable_files_are_reported(tmp_path: Path, store: SqliteSessionStore) -> None:
    not_a_session = tmp_path / "notes.txt"
    not_a_session.write_text("hello\n")
    with pytest.raises(ImportFailed, match="not in a session format"):
        import_session(store, not_a_session)
    broken = tmp_path / "broken.jsonl"
    header = '{"type":"session","format":"gosling-session","version":1,"working_dir":"/w"}'
    broken.write_text(header + '\n{"type":"message","message":{"role":"robot"}}\n')
    with pytest.raises(ImportFailed, match="line 2"):
        import_jsonl(store, broken)
    newer = tmp_path / "newer.jsonl"
    newer.write_text(header.replace('"version":1', '"version":99') + "\n")
    with pytest.raises(ImportFailed, match="newer gosling"):
        import_jsonl(store, newer)
    assert store.list_sessions() == []


def test_unknown_line_types_are_skipped(store: SqliteSessionStore) -> None:
    header = '{"type":"session","format":"gosling-session","version":1,"working_dir":"/w"}'
    message = Message.user("kept")
    text = "\n".join(
        [
            header,
            '{"type":"future_event","payload":1}',
            json.dumps({"type": "message", "message": message.model_dump(mode="json")}),
        ]
    )
    imported = store.restore(parse_session_text(text, "test"))
    assert store.load_messages(imported.id) == [message]


class _LinesImporter:
    """A toy foreign format: a file starting with `#lines`, one user message per line."""

    name = "lines"

    def sniff(self, head: str) -> bool:
        return head.startswith("#lines\n")

    def parse(self, text: str, source: str) -> SessionSnapshot:
        body = text.splitlines()[1:]
        return SessionSnapshot(
            name=source, working_dir=Path("/"), messages=[Message.user(t) for t in body]
        )


def test_other_formats_plug_in(
    tmp_path: Path, store: SqliteSessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importing_module, "_IMPORTERS", list(importing_module._IMPORTERS))
    register_importer(_LinesImporter())
    path = tmp_path / "chat.txt"
    path.write_text("#lines\nfirst\nsecond\n")
    session = import_session(store, path)
    assert [m.text for m in store.load_messages(session.id)] == ["first", "second"]
    with pytest.raises(ImportFailed, match="known formats: lines, gosling-jsonl"):
        import_session(store, path, format="claude-code")
