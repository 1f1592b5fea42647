"""Format sniffing by content, clear errors, gosling's own export, and the store hook."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gosling.conversation import Message, ToolRequest, ToolResponse
from gosling.sessions import ImportFailed, SessionSnapshot, SqliteSessionStore
from gosling.sessions.importers import (
    FORMATS,
    detect_format,
    load_transcripts,
    parse_transcripts,
    to_snapshot,
)
from gosling.sessions.jsonl import dump_jsonl

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("claude_code_session.jsonl", "claude-code"),
        ("mini_swe_agent.traj.json", "mini-swe-agent"),
        ("openhands_output.jsonl", "openhands"),
        ("openai_chat.json", "openai-chat"),
    ],
)
def test_the_format_is_read_from_the_content_not_the_name(
    tmp_path: Path, name: str, expected: str
) -> None:
    misleading = tmp_path / "transcript.txt"
    shutil.copy(FIXTURES / name, misleading)
    assert detect_format(misleading) == expected
    assert load_transcripts(misleading)[0].source_format == expected


def test_json_of_another_shape_is_refused_naming_the_formats(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"name": "not a transcript", "items": [1, 2]}')
    with pytest.raises(ImportFailed) as caught:
        load_transcripts(path)
    message = str(caught.value)
    assert str(path) in message
    assert all(fmt in message for fmt in FORMATS)


def test_text_that_is_no_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\nNothing to import here.\n")
    with pytest.raises(ImportFailed, match="not a transcript gosling can import"):
        detect_format(path)


def test_unreadable_files_fail_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(ImportFailed, match="cannot read"):
        load_transcripts(tmp_path / "missing.jsonl")
    binary = tmp_path / "blob.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ImportFailed, match="not UTF-8"):
        load_transcripts(binary)


def test_an_explicit_format_skips_sniffing_and_unknown_names_are_refused() -> None:
    text = '{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}'
    [transcript] = parse_transcripts(text, format="openai-chat")
    assert [m.text for m in transcript.messages] == ["hi", "hello"]
    with pytest.raises(ImportFailed, match="unknown transcript format 'aider'"):
        parse_transcripts(text, format="aider")  # type: ignore[arg-type]


def _session() -> SessionSnapshot:
    messages = [
        Message.user("run ls"),
        Message.assistant("ok", ToolRequest(id="t1", name="shell", arguments={"cmd": "ls"})),
        Message(role="user", content=(ToolResponse(id="t1"),)),
        Message.assistant("done"),
    ]
    return SessionSnapshot(name="Listing", working_dir=Path("/w"), messages=messages, id="s1")


def test_gosling_exports_are_read_by_the_session_reader(tmp_path: Path) -> None:
    snapshot = _session()
    path = tmp_path / "export.jsonl"
    path.write_text(dump_jsonl(snapshot))
    assert detect_format(path) == "gosling-jsonl"
    [transcript] = load_transcripts(path)
    assert list(transcript.messages) == list(snapshot.messages)
    assert transcript.title == "Listing"
    assert transcript.info["cwd"] == "/w"
    assert (transcript.stats.tool_calls, transcript.stats.tool_results) == (1, 1)
    assert transcript.stats.record_kinds["message"] == 4


def test_a_transcript_restores_as_a_session(tmp_path: Path) -> None:
    [transcript] = load_transcripts(FIXTURES / "mini_swe_agent.traj.json")
    with SqliteSessionStore(tmp_path / "sessions.db") as store:
        session = store.restore(to_snapshot(transcript))
        assert session.name == "demo__app-1"
        assert store.load_messages(session.id) == list(transcript.messages)
        imported = store.get_extension_data(session.id)["import"]
        assert imported["format"] == "mini-swe-agent"
        assert imported["system_prompt"] == transcript.system_prompt
