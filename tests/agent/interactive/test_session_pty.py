"""`gosling` on a real (pseudo-)terminal: styled output, Ctrl-C as a signal, exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gosling.conversation import Message, fix_conversation
from gosling.sessions import SqliteSessionStore
from tests.agent.interactive.pty_session import PtySession, gosling_env
from tests.fakes import FakeLLMServer, FakeToolCall, Turn


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def test_plain_gosling_on_a_terminal_chats_and_ctrl_c_stops_only_the_turn(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(Turn(text="Hello from the **fake** model."))
    term = PtySession([], repo, gosling_env(server))
    try:
        term.expect("Ctrl-D: quit")
        term.send("hello\r")
        term.expect("Hello from the fake model.")  # markdown rendered, not echoed
        assert "\x1b[1m" in term.raw.decode()  # bold: styled output on a terminal

        server.add(Turn(text="This reply is still on its way.", delay=30))
        term.send("tell me a story\r")
        server.wait_for_requests(2)
        term.send("\x03")
        term.expect("Interrupted")
        term.send("/exit\r")
        term.expect("saved")
        assert term.wait() == 0
    finally:
        term.close()

    store = SqliteSessionStore.open_default(Path(os.environ["GOSLING_HOME"]) / "data")
    try:
        (record,) = store.list_sessions()
        messages = store.load_messages(record.id)
    finally:
        store.close()
    assert [m.text for m in messages if m.metadata.user_visible] == [
        "hello",
        "Hello from the **fake** model.",
        "tell me a story",
    ]
    _, issues = fix_conversation([*messages, Message.user("go on")])
    assert issues == []


def test_without_a_terminal_gosling_prints_help_and_session_refuses(repo: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gosling", *args],
            cwd=repo,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )

    bare = run()
    assert bare.returncode == 0 and "session" in bare.stdout and "Usage:" in bare.stdout
    session = run("session")
    assert session.returncode == 2 and "needs a terminal" in session.stderr


def test_resume_takes_an_optional_id() -> None:
    from click.testing import CliRunner

    from gosling.agent.cli.session_cmd import session_command

    runner = CliRunner()
    bare = runner.invoke(session_command, ["--resume", "--name", "x"])
    assert bare.exit_code == 2 and "drop it when resuming" in bare.output  # --resume took no id
    with_id = runner.invoke(session_command, ["--resume", "20260101_1"])
    assert with_id.exit_code == 2 and "needs a terminal" in with_id.output


def test_closing_the_terminal_stops_the_running_tool_processes(
    repo: Path, server: FakeLLMServer
) -> None:
    import signal

    from tests.agent.tools.processes import processes_running, wait_until_sync
    from tests.fakes import FakeToolCall

    marks = [["sleep", "5001.1"], ["sleep", "5001.2"], ["sleep", "5001.3"]]
    command = "setsid sleep 5001.1 > /dev/null 2>&1 & sleep 5001.2 & sleep 5001.3"
    server.add(Turn(tool_calls=[FakeToolCall("developer__shell", {"command": command})]))
    term = PtySession(["session", "--sandbox", "off"], repo, gosling_env(server))
    try:
        term.expect("Ctrl-D: quit")
        term.send("run it\r")
        wait_until_sync(lambda: all(processes_running(m) for m in marks), within=30)
        os.kill(term.pid, signal.SIGHUP)
        assert term.wait() == 128 + signal.SIGHUP
    finally:
        term.close()
    wait_until_sync(lambda: not any(processes_running(m) for m in marks), within=15)
    assert "Event loop is closed" not in term.text


def test_enter_after_an_approval_key_adds_no_empty_prompt(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(
        Turn(tool_calls=[FakeToolCall("developer__shell", {"command": "echo hi"})]),
        Turn(text="Done now."),
    )
    term = PtySession(["session", "--mode", "approve"], repo, gosling_env(server))
    try:
        term.expect("Ctrl-D: quit")
        term.send("go\r")
        term.expect("Allow?")
        term.send("y\r")  # the habit: a key, then Enter
        term.expect("Done now.")
        term.expect("›")
        term.send("/exit\r")
        term.expect("saved")
        assert term.wait() == 0
    finally:
        term.close()
    before_exit = term.text.split("Done now.")[1].split("/exit")[0]
    prompt = before_exit[before_exit.index("›") :]
    assert "\n" not in prompt  # the prompt was not sent empty and drawn again
    assert len(server.model_requests()) == 2


def test_the_status_during_a_turn_uses_the_terminal_width(
    repo: Path, server: FakeLLMServer
) -> None:
    model = "claude-sonnet-4-6-with-a-long-deployment-name"
    server.add(Turn(text="Slow reply.", delay=1), Turn(text="Narrow reply.", delay=1))
    wide = PtySession([], repo, gosling_env(server, GOSLING_MODEL=model), columns=160)
    try:
        wide.expect("Ctrl-D: quit")
        wide.send("go\r")
        shown = wide.expect("Slow reply.")
        assert f"thinking…  {model} · auto · " in shown and "compacts in" in shown
        wide.send("/exit\r")
        assert wide.wait() == 0
    finally:
        wide.close()
    narrow = PtySession([], repo, gosling_env(server, GOSLING_MODEL=model), columns=60)
    try:
        narrow.expect("Ctrl-D:")
        narrow.send("go on\r")
        shown = narrow.expect("Narrow reply.")
        assert "thinking…  claude-sonnet-4-6-with-a-long-deployment… · 0%" in shown
        narrow.send("/exit\r")
        assert narrow.wait() == 0
    finally:
        narrow.close()
