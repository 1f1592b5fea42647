"""`gosling sessions ...` as a user types it."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gosling.agent.cli import sessions_cmd
from gosling.agent.cli.main import cli
from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse
from gosling.prompts.locations import user_dirs
from gosling.providers import Usage
from gosling.sessions import SqliteSessionStore, UsageRecord


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["sessions", *args], input=input)


@pytest.fixture
def user_store() -> Iterator[SqliteSessionStore]:
    with SqliteSessionStore.open_default(user_dirs().data) as store:
        yield store


def _session(store: SqliteSessionStore, name: str) -> str:
    session = store.create(working_dir="/proj", name=name, provider="anthropic", model="claude")
    call = ToolRequest(id="t1", name="shell", arguments={"command": "pytest"})
    store.append_messages(
        session.id,
        [
            Message.user(f"hello from {name}"),
            Message.assistant("Running tests.", call),
            Message.user(None, ToolResponse(id="t1", content=(TextContent(text="3 passed"),))),
            Message.user("secret summary").agent_only(),
        ],
    )
    store.record_usage(session.id, UsageRecord(Usage(input_tokens=1500, output_tokens=20)))
    store.release(session.id)
    return session.id


def test_list_when_there_are_no_sessions() -> None:
    result = run("list")
    assert result.exit_code == 0
    assert "No sessions yet" in result.output
    assert json.loads(run("list", "--json").output) == []


def test_list_as_table_and_json(user_store: SqliteSessionStore) -> None:
    older = _session(user_store, "older")
    newer = _session(user_store, "newer")
    table = run("list")
    assert table.exit_code == 0, table.output
    assert table.output.index(newer) < table.output.index(older)
    assert "newer" in table.output and "/proj" in table.output and "1.5k" in table.output

    listed = json.loads(run("list", "--json").output)
    assert [s["id"] for s in listed] == [newer, older]
    assert listed[0]["message_count"] == 4
    assert listed[0]["tokens"]["context"] == 1500
    assert listed[0]["model"] == "claude"
    assert [s["id"] for s in json.loads(run("list", "--json", "--limit", "1").output)] == [newer]


def test_show_prints_the_user_visible_transcript(user_store: SqliteSessionStore) -> None:
    session_id = _session(user_store, "demo")
    result = run("show", session_id)
    assert result.exit_code == 0
    assert "hello from demo" in result.output
    assert "`shell`" in result.output and "3 passed" in result.output
    assert "secret summary" not in result.output


def test_rename(user_store: SqliteSessionStore) -> None:
    session_id = _session(user_store, "old name")
    result = run("rename", session_id, "new name")
    assert result.exit_code == 0
    assert user_store.get(session_id).name == "new name"


def test_rm_asks_first(user_store: SqliteSessionStore, monkeypatch: pytest.MonkeyPatch) -> None:
    # A terminal is there to answer; without one, rm asks for -y (tests/agent/test_habits_run.py).
    monkeypatch.setattr(sessions_cmd, "_stdin_is_terminal", lambda: True)
    session_id = _session(user_store, "doomed")
    declined = run("rm", session_id, input="n\n")
    assert declined.exit_code != 0
    assert "4 messages" in declined.output
    assert user_store.get(session_id).name == "doomed"
    accepted = run("rm", session_id, input="y\n")
    assert accepted.exit_code == 0
    assert user_store.list_sessions() == []
    other = _session(user_store, "quick")
    assert run("rm", "--yes", other).exit_code == 0
    assert user_store.list_sessions() == []


def test_rm_refuses_a_session_in_use(user_store: SqliteSessionStore) -> None:
    session_id = _session(user_store, "busy")
    user_store.open_for_writing(session_id)
    result = run("rm", "--yes", session_id)
    assert result.exit_code == 1
    assert "open for writing" in result.output
    assert user_store.get(session_id).message_count == 4


def test_unknown_id_is_a_clear_error() -> None:
    for args in (("show", "nope"), ("rename", "nope", "x"), ("rm", "-y", "nope")):
        result = run(*args)
        assert result.exit_code == 1
        assert "no session with id 'nope'" in result.output


def test_export_and_import(user_store: SqliteSessionStore, tmp_path: Path) -> None:
    session_id = _session(user_store, "portable")
    out = tmp_path / "portable.jsonl"
    exported = run("export", session_id, "--format", "jsonl", "-o", str(out))
    assert exported.exit_code == 0, exported.output
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert run("export", session_id).stdout == out.read_text()

    imported = run("import", str(out))
    assert imported.exit_code == 0, imported.output
    new_id = imported.stdout.strip()
    assert new_id != session_id
    assert user_store.load_messages(new_id) == user_store.load_messages(session_id)

    from_stdin = run("import", "-", input=out.read_text())
    assert from_stdin.exit_code == 0
    assert len(user_store.list_sessions()) == 3

    markdown = run("export", session_id, "--format", "markdown")
    assert markdown.stdout.startswith("# portable")


def test_import_of_a_foreign_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}\n')
    result = run("import", str(path))
    assert result.exit_code == 2
    assert "not a transcript gosling can import" in result.output
    assert "claude-code" in result.output


def test_a_corrupt_database_is_reported_not_replaced() -> None:
    db = user_dirs().data / "sessions.db"
    db.parent.mkdir(parents=True)
    db.write_bytes(b"garbage" * 100)
    result = run("list")
    assert result.exit_code == 1
    assert str(db) in result.output and "not modified" in result.output
    assert db.read_bytes() == b"garbage" * 100


def test_import_of_a_foreign_transcript_creates_sessions(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(
        '[{"role": "user", "content": "list files"},'
        ' {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",'
        ' "function": {"name": "bash", "arguments": "{\\"command\\": \\"ls\\"}"}}]},'
        ' {"role": "tool", "tool_call_id": "c1", "content": "a.py"},'
        ' {"role": "assistant", "content": "There is a.py"}]'
    )
    result = run("import", str(path))
    assert result.exit_code == 0, result.output
    session_id = result.stdout.strip()
    assert "from openai-chat" in result.stderr and "(1 tool calls)" in result.stderr
    shown = run("show", session_id)
    assert "There is a.py" in shown.stdout
