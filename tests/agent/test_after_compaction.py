"""What comes back after a compaction (issue 27 item 5): the hints of the directories still in
play and the files touched last, read from disk again within the settings' budget, and never
what the file tools could not show."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gosling.agent.after_compaction import RESTORED_KIND
from gosling.agent.agent import Agent
from gosling.agent.config import Settings
from gosling.agent.events import CompactionFinished
from gosling.agent.session import AgentSession
from gosling.context_mgmt.receipt import RECEIPTS_KEY
from gosling.conversation import Message
from gosling.prompts.locations import user_dirs
from gosling.providers import ModelConfig, ScriptedProvider
from gosling.sessions import SqliteSessionStore
from tests.context_mgmt.builders import pair

SUMMARY = "```json\n" + json.dumps({"user_intent": ["Fix the parser"]}) + "\n```"
PADDING = "log line of an old command\n" * 60


def _agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **settings: object) -> Agent:
    monkeypatch.setenv("GOSLING_HOME", str(tmp_path / "state"))
    store = SqliteSessionStore.open_default(user_dirs().data)
    provider = ScriptedProvider([SUMMARY], model_config=ModelConfig("m", context_limit=200_000))
    return Agent(
        provider,
        session_store=store,
        config=Settings.model_validate(settings),
        working_dir=tmp_path / "repo",
    )


def _read(session: AgentSession, call_id: str, path: str) -> None:
    """A `developer__read` of `path`, with the subdirectory hints it brings, as the loop
    stores them."""
    wd = session.working_dir
    session.hints.record_tool_arguments({"path": path}, wd)
    session.append(*pair(call_id, "developer__read", {"path": path}, (wd / path).read_text()))
    loaded = session.hints.load_new_hints(wd)
    if loaded:
        text = "\n\n".join(content for _, content in loaded)
        session.append(Message.user(text).agent_only().with_kind("hints"))


async def _compact(session: AgentSession) -> tuple[CompactionFinished, list[Message]]:
    events = [e async for e in session.pipeline.compact(session, trigger="threshold")]
    (finished,) = [e for e in events if isinstance(e, CompactionFinished)]
    view = session.view.request_messages(session.messages)
    return finished, view


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg" / "parser").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "pkg" / "AGENTS.md").write_text("Parser rule: never use regexes for brackets.\n")
    (root / "docs" / "AGENTS.md").write_text("Docs rule: one sentence per line.\n")
    (root / "pkg" / "parser" / "brackets.py").write_text("def match(s):\n    return s\n")
    (root / "pkg" / "parser" / "tokens.py").write_text("TOKENS = ['(', ')']\n")
    (root / "docs" / "guide.md").write_text("# Guide\n")
    (root / "other").mkdir()
    (root / "other" / "AGENTS.md").write_text("Never loaded.\n")
    return root


async def test_the_files_touched_last_and_the_hints_in_play_come_back_from_disk(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = _agent(tmp_path, monkeypatch, compaction_reread_files=2)
    session = agent.new_session()
    session.append(Message.user("Fix the parser"))
    _read(session, "r1", "docs/guide.md")
    _read(session, "r2", "pkg/parser/tokens.py")
    _read(session, "r3", "pkg/parser/brackets.py")
    session.append(*pair("c1", "developer__shell", {"command": "make"}, PADDING))
    session.append(Message.assistant("Reading done."), Message.user("now fix it"))
    # changed after it was read: what comes back is the file as it is now
    (repo / "pkg" / "parser" / "brackets.py").write_text("def match(s):\n    return balanced(s)\n")

    finished, view = await _compact(session)

    restored = session.messages[-1]  # stored after the summary, for the model only
    assert restored.metadata.kind == RESTORED_KIND and not restored.metadata.user_visible
    text = view[-1].text  # the request ends with it (merged into the last user turn)
    assert restored.text in text
    assert "Parser rule: never use regexes for brackets." in text  # pkg/ is in play
    assert "Docs rule: one sentence per line." in text  # so is docs/ (touched 3rd last)
    assert "Never loaded" not in text  # other/ was never touched: its hints never went out
    assert "return balanced(s)" in text and "return s\n" not in text
    assert text.index('path="pkg/parser/brackets.py"') < text.index('path="pkg/parser/tokens.py"')
    assert 'path="docs/guide.md"' not in text  # two files at most
    assert finished.restored is not None
    assert [f["path"] for f in finished.restored["files"]] == [
        "pkg/parser/brackets.py",
        "pkg/parser/tokens.py",
    ]
    assert finished.restored["hint_directories"] == [str(repo / "pkg"), str(repo / "docs")]
    assert finished.to_json()["restored"]["tokens"] == finished.restored["tokens"] > 0
    assert session.id is not None
    store = agent.store
    assert store is not None
    stored = store.get_extension_data(session.id)[RECEIPTS_KEY][-1]
    assert stored["restored"]["files"][0]["path"] == "pkg/parser/brackets.py"
    # what was retained counts what came back
    assert finished.tokens_after >= finished.restored["tokens"]


async def test_the_token_budget_cuts_the_last_file_at_a_line_and_zero_files_still_sends_hints(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = "".join(f"line_{i:04} = compute_value({i})\n" for i in range(3000))
    (repo / "pkg" / "parser" / "table.py").write_text(big)
    agent = _agent(tmp_path, monkeypatch, compaction_reread_tokens=2000)
    session = agent.new_session()
    session.append(Message.user("Fix the parser"))
    _read(session, "r1", "pkg/parser/table.py")
    session.append(Message.assistant("Read."), Message.user("go on"))

    finished, view = await _compact(session)
    assert finished.restored is not None
    (entry,) = finished.restored["files"]
    assert entry["cut"] is True and entry["tokens"] <= 2000
    text = view[-1].text
    assert "line_0000 = compute_value(0)\n" in text and "line_2999" not in text
    shown = text.split('<file path="pkg/parser/table.py">\n', 1)[1]
    kept = shown.split("[cut: lines 1-", 1)[1].split(" ", 1)[0]
    assert f"line_{int(kept) - 1:04} = compute_value({int(kept) - 1})\n[cut:" in shown
    assert " of 3000 shown; view the file for the rest]" in shown

    (tmp_path / "again").mkdir()
    (tmp_path / "again" / "repo").symlink_to(repo)
    off = _agent(tmp_path / "again", monkeypatch, compaction_reread_files=0)
    session = off.new_session()
    session.append(Message.user("Fix the parser"))
    _read(session, "r1", "pkg/parser/tokens.py")
    session.append(Message.assistant("Read."), Message.user("go on"))
    finished, view = await _compact(session)
    assert finished.restored is not None and finished.restored["files"] == []
    assert "Parser rule" in view[-1].text and "<file" not in view[-1].text


async def test_credentials_files_outside_the_working_dir_and_git_internals_never_come_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "repo"  # the user runs gosling in their home directory
    (home / ".git").mkdir(parents=True)
    (home / ".git" / "config").write_text("[remote]\n\turl = https://example.com/x\n")
    (home / ".netrc").write_text("machine example.com login me password hunter2hunter2\n")
    (home / "notes.txt").write_text("token ghp_" + "a" * 36 + " in a note\n")
    (tmp_path / "outside.txt").write_text("outside the project\n")
    monkeypatch.setenv("HOME", str(home))
    agent = _agent(tmp_path, monkeypatch, compaction_reread_files=10)
    session = agent.new_session()
    session.append(Message.user("Look around"))
    for n, path in enumerate(["notes.txt", ".netrc", ".git/config", "../outside.txt"]):
        output = "(read earlier)"
        session.append(*pair(f"r{n}", "developer__read", {"path": path}, output))
    session.append(*pair("c1", "developer__shell", {"command": "make"}, PADDING))
    session.append(Message.assistant("Done."), Message.user("go on"))

    finished, view = await _compact(session)
    assert finished.restored is not None
    assert [f["path"] for f in finished.restored["files"]] == ["notes.txt"]
    text = view[-1].text
    assert "hunter2" not in text and "outside the project" not in text and "[remote]" not in text
    assert "ghp_" + "a" * 36 not in text and "in a note" in text  # redacted like tool output
