"""API keys never reach the session file, however they turn up."""

from __future__ import annotations

from pathlib import Path

import pytest

from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse
from gosling.providers import Usage
from gosling.sessions import SecretRefused, SqliteSessionStore, UsageRecord, export_session

ANTHROPIC_KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
OPENAI_KEY = 'sk-proj-Zyxwvutsrqponm"lkjihgfedcba9876'  # a quote: escaped inside JSON


def _all_bytes(directory: Path) -> bytes:
    return b"".join(p.read_bytes() for p in directory.rglob("*") if p.is_file())


def test_keys_from_the_environment_are_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    data = tmp_path / "data"
    with SqliteSessionStore.open_default(data) as store:
        session = store.create(working_dir="/w", provider="anthropic", model="claude")
        env_dump = f"HOME=/root\nANTHROPIC_API_KEY={ANTHROPIC_KEY}\nOPENAI_API_KEY={OPENAI_KEY}"
        call = ToolRequest(id="t1", name="shell", arguments={"command": "env"})
        store.append_messages(
            session.id,
            [
                Message.user(f"my key is {ANTHROPIC_KEY}, use it"),
                Message.assistant(None, call),
                Message.user(None, ToolResponse(id="t1", content=(TextContent(text=env_dump),))),
            ],
        )
        store.record_usage(session.id, UsageRecord(Usage(input_tokens=10), model="claude"))
        store.set_extension_data(session.id, "notes", {"seen": f"saw {OPENAI_KEY}"})
        store.rename(session.id, f"debugging {ANTHROPIC_KEY}")
        loaded = store.load_messages(session.id)
        exported = export_session(store, session.id, "jsonl")

    stored = _all_bytes(data)
    for key in (ANTHROPIC_KEY, OPENAI_KEY):
        assert key.encode() not in stored
        assert key not in exported
    assert b'sk-proj-Zyxwvutsrqponm\\"lkjihgfedcba9876' not in stored
    assert "[REDACTED:ANTHROPIC_API_KEY]" in loaded[0].text
    assert "OPENAI_API_KEY=[REDACTED:OPENAI_API_KEY]" in loaded[2].tool_responses[0].text()


@pytest.mark.parametrize(
    "value",
    [
        {"api_key": "abc"},
        {"server": {"headers": {"Authorization": "Bearer abc"}}},
        [{"x-api-key": "abc"}],
        {"oauth": {"refresh_token": "abc"}},
    ],
)
def test_extension_data_named_like_a_credential_is_refused(
    store: SqliteSessionStore, value: object
) -> None:
    session = store.create(working_dir="/w")
    with pytest.raises(SecretRefused, match="looks like a credential"):
        store.set_extension_data(session.id, "mcp", value)
    assert store.get_extension_data(session.id) == {}


def test_ordinary_extension_data_is_kept(store: SqliteSessionStore) -> None:
    session = store.create(working_dir="/w")
    todo = [{"content": "count the tokens", "status": "pending", "id": 1}]
    store.set_extension_data(session.id, "todo", todo)
    assert store.get_extension_data(session.id) == {"todo": todo}
