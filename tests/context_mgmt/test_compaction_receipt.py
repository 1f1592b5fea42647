"""The compaction receipt (issue 27 item 6): on a crafted session, exactly the files,
commands and error lines the hidden originals hold and the summary (with its bounded trail)
does not; shown after the compaction, in stream-json, `/context` and `sessions show`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gosling.agent.agent import Agent
from gosling.agent.cli.main import cli
from gosling.agent.config import Settings
from gosling.agent.context_report import format_context_report, report_for_agent
from gosling.agent.events import CompactionFinished
from gosling.context_mgmt import compact_messages
from gosling.context_mgmt.receipt import RECEIPTS_KEY
from gosling.conversation import Message
from gosling.prompts.locations import user_dirs
from gosling.providers import ModelConfig, ScriptedProvider
from gosling.sessions import SqliteSessionStore
from tests.context_mgmt.builders import pair

SUMMARY = (
    "```json\n"
    + json.dumps(
        {
            "user_intent": ["Fix every case"],
            "errors_and_fixes": ["ValueError: case 03 came from the parser"],
            "current_work": "Re-running `run 01` after the parser fix",
        }
    )
    + "\n```"
)


def _session_messages() -> list[Message]:
    """26 files read (one more than the trail lists), 21 failing commands (one more), 21
    distinct errors (nine more); the padding makes the history larger than its summary."""
    messages = [Message.user("Fix every case")]
    for i in range(26):
        messages += pair(f"r{i}", "developer__read", {"path": f"src/f{i:02}.py"}, "x = 1\n" * 40)
    for i in range(21):
        output = f"Exit code: 1\n{'log line' * 30}\nValueError: case {i:02}"
        messages += pair(f"c{i}", "developer__shell", {"command": f"run {i:02}"}, output)
    messages += [Message.assistant("Still failing."), Message.user("keep going")]
    return messages


async def test_the_receipt_lists_exactly_what_the_summary_dropped() -> None:
    result = await compact_messages(ScriptedProvider([SUMMARY]), _session_messages())
    receipt = result.receipt
    assert receipt.files == ("src/f00.py",)  # folded out of the trail, never named
    assert receipt.commands == ("run 00",)  # folded; `run 01` is named by the model
    assert receipt.errors == tuple(f"ValueError: case {i:02}" for i in (0, 1, 2, 4, 5, 6, 7, 8))
    assert receipt.line() == (
        "kept 25 files, 20 commands, 13 error lines; "
        "dropped 1 file, 1 command, 8 error lines (recallable)"
    )


async def test_the_receipt_reaches_the_user_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOSLING_HOME", str(tmp_path / "home"))
    store = SqliteSessionStore.open_default(user_dirs().data)
    provider = ScriptedProvider([SUMMARY], model_config=ModelConfig("m", context_limit=200_000))
    agent = Agent(provider, session_store=store, config=Settings(), working_dir=tmp_path)
    session = agent.new_session()
    session.append(*_session_messages())

    events = [e async for e in session.pipeline.compact(session, trigger="threshold")]
    (finished,) = [e for e in events if isinstance(e, CompactionFinished)]
    line = "dropped 1 file, 1 command, 8 error lines (recallable)"
    assert finished.receipt_line.endswith(line)
    streamed = finished.to_json()  # the stream-json line
    assert streamed["type"] == "compaction_finished"
    assert streamed["receipt"]["dropped"]["commands"] == ["run 00"]
    assert streamed["receipt"]["dropped"]["counts"] == {"files": 1, "commands": 1, "errors": 8}

    report = format_context_report(report_for_agent(agent, session))  # /context
    assert "Last compaction (threshold, ~" in report and line in report
    assert "  dropped file: src/f00.py" in report
    assert "  dropped command: run 00" in report
    assert "  dropped error: ValueError: case 08" in report

    assert session.id is not None
    stored = store.get_extension_data(session.id)[RECEIPTS_KEY]
    assert stored[-1]["dropped"]["files"] == ["src/f00.py"]
    store.close()
    shown = CliRunner().invoke(cli, ["sessions", "show", session.id])
    assert shown.exit_code == 0, shown.output
    compactions = shown.output.split("## Compactions\n", 1)[1]
    assert compactions.lstrip().startswith("1. (threshold, ~")
    assert line in compactions and "dropped command: run 00" in compactions
