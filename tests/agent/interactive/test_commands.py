"""Slash commands, approvals and keys of the interactive session, driven like a user would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gosling.agent.cli.interactive.commands import parse
from tests.agent.interactive.driver import CTRL_D, interactive, session_options
from tests.fakes import FakeLLMServer, FakeToolCall, FakeUsage, Turn

ESC_ENTER = "\x1b\r"
CTRL_C = "\x03"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    (work / ".git").mkdir(parents=True)
    (work / "AGENTS.md").write_text("Use tabs.\n")
    return work


def last_user_text(server: FakeLLMServer) -> str:
    """The user's words in the last request (the per-turn context block follows them)."""
    content = server.model_requests()[-1].body["messages"][-1]["content"]
    text: str = content[0]["text"]
    return text


def test_parse_splits_the_command_from_its_argument() -> None:
    assert parse("/compact keep the API decisions ") == ("/compact", "keep the API decisions")
    assert parse("/QUIT") == ("/exit", "")
    assert parse("/mode") == ("/mode", "")


async def test_commands_keys_and_modes(repo: Path, server: FakeLLMServer, tmp_path: Path) -> None:
    options = session_options(server, repo, mode="smart_approve", name="demo")
    async with interactive(options, tmp_path / "history") as user:
        await user.expect("mode smart_approve")

        user.type("/help")
        await user.expect("/compact [focus]")
        user.type("/contxt")
        await user.expect("Did you mean /context?")

        user.type("/mode chat")
        await user.expect("mode: chat")
        await user.expect("· chat ·", on=user.prompt)
        user.type("/mode sometimes")
        await user.expect("choose one of: auto, approve, smart_approve, chat")
        user.type("/mode approve")
        await user.expect("mode: approve")

        # Esc+Enter adds a line; Enter sends both. `//` sends a leading slash.
        server.add(Turn(text="Two lines received."))
        user.keys("first line" + ESC_ENTER + "second line\r")
        await user.expect("Two lines received.")
        assert last_user_text(server) == "first line\nsecond line"
        server.add(Turn(text="Pasted."))
        user.keys("\x1b[200~pasted one\npasted two\x1b[201~\r")  # a bracketed paste
        await user.expect("Pasted.")
        assert last_user_text(server) == "pasted one\npasted two"
        server.add(Turn(text="A path."))
        user.type("//etc/hosts is a file")
        await user.expect("A path.")
        assert last_user_text(server) == "/etc/hosts is a file"

        # Ctrl-C clears a half-typed line; at an empty prompt it says how to leave.
        user.keys("never sent" + CTRL_C)
        user.keys(CTRL_C)
        await user.expect("(Ctrl-D or /exit quits)")
        user.type("/sessions")
        listing = await user.expect("/resume ID")
        assert "* " in listing and "demo" in listing
        assert user.screen.text.count("(Ctrl-D or /exit quits)") == 1

        user.type("/hints")
        hints = await user.expect("subdirectory hints")
        assert "AGENTS.md" in hints

        # "a" allows a tool for the rest of the session; "n" declines a call.
        server.add(
            Turn(tool_calls=[FakeToolCall("developer__shell", {"command": "echo one"})]),
            Turn(tool_calls=[FakeToolCall("developer__shell", {"command": "echo two"})]),
            Turn(tool_calls=[FakeToolCall("developer__write", {"path": "x.txt", "content": "x"})]),
            Turn(text="Done, without the file.", usage=FakeUsage(900, 5)),
        )
        user.type("run things")
        await user.expect("needs approval")
        user.keys("a")
        await user.expect("will not ask again")
        await user.expect("allowed by a rule of this session")  # "a" remembered `echo`
        await user.expect("developer__write  path=x.txt")
        await user.expect("needs approval")
        user.keys("n")
        await user.expect("declined")
        await user.expect("Done, without the file.")
        assert not (repo / "x.txt").exists()
        assert "declined" in json.dumps(server.model_requests()[-1].body)

        # /model switches the model for the next call and the status line follows.
        user.type("/model claude-other")
        await user.expect("model: anthropic/claude-other")
        await user.expect("claude-other · approve", on=user.prompt)
        server.add(Turn(text="From the other model."))
        user.type("who are you?")
        await user.expect("From the other model.")
        assert server.model_requests()[-1].body["model"] == "claude-other"

        user.keys(CTRL_D)
        assert await user.exit_code() == 0
    server.assert_complete()


async def test_resume_command_switches_sessions(
    repo: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    history = tmp_path / "history"
    server.add(Turn(text="Answer in the first session."))
    async with interactive(session_options(server, repo), history) as user:
        user.type("first session question")
        await user.expect("Answer in the first session.")
        user.type("/exit")
        await user.exit_code()
        first_id = (await user.expect("saved")).split("Session ")[-1].split(" ")[0]

    server.add(Turn(text="Answer in the second session."))
    async with interactive(session_options(server, repo), history) as user:
        user.type("second session question")
        await user.expect("Answer in the second session.")
        user.type("/resume")
        shown = await user.expect("resumed")
        assert f"Resumed session {first_id}" in shown and "first session question" in shown
        server.add(Turn(text="Back in the first."))
        user.type("continue")
        await user.expect("Back in the first.")
        body = json.dumps(server.model_requests()[-1].body)
        assert "first session question" in body and "second session question" not in body
        user.type("/resume no-such-session")
        await user.expect("error:")
        user.type("/exit")
        assert await user.exit_code() == 0


async def test_an_untouched_session_is_not_kept(
    repo: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    async with interactive(session_options(server, repo), tmp_path / "history") as user:
        await user.expect("Ctrl-D: quit")
        user.keys(CTRL_D)
        assert await user.exit_code() == 0
    async with interactive(session_options(server, repo, resume=""), tmp_path / "h") as user:
        await user.expect("no session to resume")
        assert await user.exit_code() == 1


async def test_ctrl_c_at_the_approval_question_interrupts_the_turn(
    repo: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    options = session_options(server, repo, mode="approve")
    server.add(Turn(tool_calls=[FakeToolCall("developer__shell", {"command": "touch x"})]))
    async with interactive(options, tmp_path / "history") as user:
        user.type("make a file")
        await user.expect("needs approval")
        user.keys(CTRL_C)
        await user.expect("Interrupted")
        server.add(Turn(text="Understood, no file."))
        user.type("never mind")
        await user.expect("Understood, no file.")
        sent = server.model_requests()[-1].body["messages"]
        assert [m["role"] for m in sent] == ["user", "assistant", "user"]
        result = sent[-1]["content"][0]
        assert result["type"] == "tool_result" and "Cancelled" in json.dumps(result)
        user.keys(CTRL_D)
        assert await user.exit_code() == 0
    assert not (repo / "x").exists()
