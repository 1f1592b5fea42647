"""A whole interactive session against the loopback fake server, as a user drives it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import pytest

from gosling.agent.cli.interactive.render import FOLD_LINES
from gosling.conversation import Message, fix_conversation
from gosling.sessions import SqliteSessionStore
from tests.agent.interactive.driver import CTRL_D, interactive, session_options
from tests.fakes import FakeLLMServer, FakeToolCall, FakeUsage, Turn

SUMMARY_TEXT = (
    '<analysis>short</analysis>\n```json\n{"user_intent": ["know what 2+2 is"], '
    '"current_work": "answered arithmetic"}\n```'
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    (work / ".git").mkdir(parents=True)
    (work / "AGENTS.md").write_text("Always answer briefly.\n")
    return work


def stored(session_id: str) -> list[Message]:
    store = SqliteSessionStore.open_default(Path(os.environ["GOSLING_HOME"]) / "data")
    try:
        return store.load_messages(session_id)
    finally:
        store.close()


def only_session_id() -> str:
    store = SqliteSessionStore.open_default(Path(os.environ["GOSLING_HOME"]) / "data")
    try:
        (record,) = store.list_sessions()
        return record.id
    finally:
        store.close()


async def test_a_day_in_the_session(repo: Path, server: FakeLLMServer, tmp_path: Path) -> None:
    history = tmp_path / "history"
    options = session_options(server, repo, mode="approve")
    async with interactive(options, history) as user:
        await user.expect("mode approve")

        # A question, answered with streamed text; the status line follows the usage.
        server.add(Turn(text="Two plus two is **four**.", usage=FakeUsage(1_200, 9)))
        user.type("What is 2+2?")
        await user.expect("Two plus two is **four**.")
        toolbar = "test-model · approve · 1.2k/128k tokens (1%) · compacts in 101.2k"
        await user.expect(toolbar, on=user.prompt)

        # A tool call in approve mode: asked, approved with one key, run, result folded.
        server.add(
            Turn(
                text="Let me look.",
                tool_calls=[FakeToolCall("developer__shell", {"command": "seq 1 9"})],
            ),
            Turn(text="Nine lines.", usage=FakeUsage(2_000, 4)),
        )
        user.type("count to nine")
        await user.expect("● developer__shell  seq 1 9")
        await user.expect("needs approval")
        user.keys("y")
        await user.expect("allowed once")
        shown = await user.expect("Nine lines.")
        hidden = 12 - FOLD_LINES  # exit code, stdout header, 9 numbers, empty stderr
        assert "⎿  Exit code: 0" in shown and f"… {hidden} more lines" in shown
        assert "     9\n" not in shown
        second = json.dumps(server.model_requests()[-1].body)
        assert "1\\n2\\n3" in second

        # /context: tokens by kind and what compaction would do.
        user.type("/context")
        report = await user.expect("/compact now would")
        for label in ("system prompt", "hints", "messages", "tool results", "tool schemas"):
            assert label in report
        assert "Auto-compaction at 80%" in report

        # /compact with a focus: the model gets the focus, the history keeps the command.
        server.add(Turn(text=SUMMARY_TEXT))
        user.type("/compact keep the arithmetic")
        await user.expect("Compaction complete")
        assert "keep the arithmetic" in json.dumps(server.model_requests()[-1].body)

        # /clear hides everything from the model and says so.
        user.type("/clear")
        await user.expect("Conversation cleared")

        # Ctrl-C while the reply is still on its way: the turn stops, the app stays.
        server.add(Turn(text="A very long story", delay=30))
        user.type("tell me a long story")
        await asyncio.to_thread(server.wait_for_requests, len(server.model_requests()) + 1)
        os.kill(os.getpid(), signal.SIGINT)
        await user.expect("Interrupted")

        session_id = only_session_id()
        messages = stored(session_id)
        _, issues = fix_conversation([*messages, Message.user("go on")])
        assert issues == []
        commands = [m for m in messages if m.metadata.kind == "command"]
        assert [m.text for m in commands] == [
            "/compact keep the arithmetic",
            commands[1].text,
            "/clear",
            commands[3].text,
        ]
        assert commands[1].text.startswith("Compaction complete")
        assert all(not m.metadata.agent_visible for m in commands)

        # The session is still usable; the model only sees what came after /clear.
        server.add(Turn(text="Still here.", usage=FakeUsage(300, 3)))
        user.type("still there?")
        await user.expect("Still here.")
        sent = server.model_requests()[-1].body["messages"]
        assert "2+2" not in json.dumps(sent)
        assert sent[-1]["content"][0]["text"].startswith("still there?") or "still there?" in (
            json.dumps(sent[-1])
        )

        user.type("/exit")
        assert await user.exit_code() == 0
        await user.expect(f"gosling session --resume {session_id}")

    # Resume: the last exchanges are shown, and the conversation continues.
    async with interactive(session_options(server, repo, resume=""), history) as user:
        recent = await user.expect("resumed")
        assert "› still there?" in recent and "Still here." in recent
        assert "/clear" in recent
        server.add(Turn(text="Resumed answer."))
        user.type("and now?")
        await user.expect("Resumed answer.")
        body = json.dumps(server.model_requests()[-1].body)
        assert "still there?" in body and "and now?" in body
        user.keys(CTRL_D)
        assert await user.exit_code() == 0
    assert "still there?" in history.read_text()
