"""`gosling acp` as a subprocess, driven by the official Python SDK's client side through a
whole session against the loopback fake model server: a prompt turn with tool calls,
permissions answered every way, cancel mid-tool, a restart, resume and load, listing, and
the same sessions seen and continued by the `gosling` command line."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gosling.agent.tool_runner import CANCELLED_TEXT
from gosling.providers.pricing import cost_usd
from gosling.sessions import SqliteSessionStore
from tests.acp.client import REPO, RecordingClient, agent_args, agent_env, running_agent, text
from tests.agent.interactive.pty_session import PtySession
from tests.fakes import FakeLLMServer, FakeToolCall, FakeUsage, Turn

MODEL = "claude-sonnet-4-5"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    (work / ".git").mkdir(parents=True)
    (work / "hello.txt").write_text("hello world\n")
    return work


def call(name: str, **arguments: object) -> Turn:
    return Turn(tool_calls=[FakeToolCall(name, arguments)])


def store(home: Path) -> SqliteSessionStore:
    return SqliteSessionStore.open_default(home / "data")


def gosling_cli(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gosling", *args],
        cwd=cwd,
        env=agent_env(home, NO_COLOR="1", COLUMNS="300"),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.timeout(600)
async def test_a_whole_session_across_a_restart_and_the_command_line(
    repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    with FakeLLMServer() as server:
        server.add(
            Turn(
                text="Let me look.",
                tool_calls=[FakeToolCall("developer__shell", {"command": "cat hello.txt"})],
                usage=FakeUsage(input_tokens=1_000, output_tokens=20),
            ),
            call("developer__edit", path="hello.txt", old="world", new="gosling"),
            call("developer__edit", path="hello.txt", old="gosling", new="gosling!"),
            call("developer__shell", command="rm hello.txt"),
            Turn(text="Done: it says hello gosling!", usage=FakeUsage(1_500, 10, 300, 0)),
            call("developer__shell", command="sleep 60 && touch finished.txt"),
        )
        client = RecordingClient(answers=["allow_once", "allow_always", "reject_once"])
        async with running_agent(
            client, agent_args(server, "--mode", "approve"), agent_env(home)
        ) as (
            conn,
            init,
            _,
        ):
            capabilities = init.agent_capabilities
            assert capabilities is not None and capabilities.load_session
            assert capabilities.session_capabilities is not None
            assert capabilities.session_capabilities.resume is not None
            new = await conn.new_session(cwd=str(repo), mcp_servers=[])
            sid = new.session_id
            assert new.modes is not None and new.modes.current_mode_id == "approve"
            assert new.config_options is not None
            assert [o.id for o in new.config_options] == ["mode", "model"]

            first = await conn.prompt(session_id=sid, prompt=text("change the greeting"))
            assert first.stop_reason == "end_turn"
            assert (repo / "hello.txt").read_text() == "hello gosling!\n"  # rm was rejected

            # Three questions: the shell once, the first edit always (the second edit of the
            # same file then runs without asking), and the rm, rejected.
            assert [a.tool_call.title for a in client.asked] == [
                "Run `cat hello.txt`",
                "Edit hello.txt",
                "Run `rm hello.txt`",
            ]
            edit_options = {o.option_id: o.name for o in client.asked[1].options}
            assert edit_options["allow_always"] == (
                "Always allow developer__edit(/hello.txt) in this session"
            )
            starts = client.of_kind("tool_call", sid)
            assert [s.kind for s in starts] == ["execute", "edit", "edit", "execute"]
            diff = starts[1].content[0]
            assert (diff.old_text, diff.new_text) == ("hello world\n", "hello gosling\n")
            finals = {
                u.tool_call_id: u.status
                for u in client.of_kind("tool_call_update", sid)
                if u.status in ("completed", "failed")
            }
            assert [finals[s.tool_call_id] for s in starts] == [
                "completed",
                "completed",
                "completed",
                "failed",
            ]
            assert "Let me look." in client.agent_text(sid)
            assert "Done: it says hello gosling!" in client.agent_text(sid)
            titles = [u.title for u in client.of_kind("session_info_update", sid)]
            assert titles == ["change the greeting"]

            # The context meter: the last update is the stored size, and the cost is what
            # the stored usage of every call costs.
            with store(home) as db:
                record = db.get(sid)
                records = db.usage_records(sid)
                granted = db.get_extension_data(sid)["permissions.allow"]
            meter = client.of_kind("usage_update", sid)[-1]
            assert meter.used == record.tokens.context_tokens == 1_810
            assert meter.size == 200_000
            expected = sum(cost_usd(r.model, r.usage) or 0 for r in records)
            assert meter.cost.currency == "USD"
            assert meter.cost.amount == pytest.approx(expected, abs=1e-6)
            assert len(records) == 5
            assert granted == ["developer__edit(/hello.txt)"]

            # Cancel mid-tool: the call is answered, nothing is lost.
            client.answers.append("allow_once")
            turn = asyncio.ensure_future(
                conn.prompt(session_id=sid, prompt=text("run the slow check"))
            )
            await client.wait_until(
                lambda: any(
                    u.status == "in_progress" for u in client.of_kind("tool_call_update", sid)[-2:]
                )
            )
            await conn.cancel(session_id=sid)
            cancelled = await turn
            assert cancelled.stop_reason == "cancelled"
            last = client.of_kind("tool_call_update", sid)[-1]
            assert last.status == "failed"
            assert not (repo / "finished.txt").exists()

            listed = await conn.list_sessions(cwd=str(repo))
            assert [(s.session_id, s.title) for s in listed.sessions] == [
                (sid, "change the greeting")
            ]

        with store(home) as db:
            messages = db.load_messages(sid)
        answer = messages[-1].tool_responses[0]
        assert answer.is_error and answer.text() == CANCELLED_TEXT
        assert messages[-2].tool_requests[0].id == answer.id

        # A session started on the command line ...
        server.add(Turn(text="Hello from the terminal."))
        cli = gosling_cli(
            home,
            repo,
            "run",
            "--provider",
            "anthropic",
            "--model",
            MODEL,
            "--base-url",
            server.url,
            "-t",
            "hi from the terminal",
        )
        assert cli.returncode == 0, cli.stderr
        with store(home) as db:
            cli_id = next(s.id for s in db.list_sessions() if s.id != sid)

        # ... and the ACP one after a restart: resumed (no replay), continued with the
        # "always" rule kept; the command-line one loaded (replayed).
        server.add(
            call("developer__edit", path="hello.txt", old="gosling!", new="gosling again"),
            Turn(text="Continuing."),
        )
        client = RecordingClient()
        async with running_agent(
            client, agent_args(server, "--mode", "approve"), agent_env(home)
        ) as (
            conn,
            _,
            process,
        ):
            listed = await conn.list_sessions(cwd=str(repo))
            assert {s.session_id for s in listed.sessions} == {sid, cli_id}
            resumed = await conn.resume_session(cwd=str(repo), session_id=sid, mcp_servers=[])
            assert resumed.modes is not None and resumed.modes.current_mode_id == "approve"
            assert "user_message_chunk" not in client.kinds(sid)
            again = await conn.prompt(session_id=sid, prompt=text("and now?"))
            assert again.stop_reason == "end_turn"
            assert client.asked == []
            assert (repo / "hello.txt").read_text() == "hello gosling again\n"
            sent = json.dumps(server.model_requests()[-1].body)
            assert "change the greeting" in sent and CANCELLED_TEXT in sent

            await conn.load_session(cwd=str(repo), session_id=cli_id, mcp_servers=[])
            replayed = client.kinds(cli_id)
            assert replayed[:2] == ["user_message_chunk", "agent_message_chunk"]
            assert client.agent_text(cli_id).startswith("Hello from the terminal.")
            await conn.close_session(session_id=sid)
        assert process.returncode == 0

        # The command line lists the ACP session and continues it.
        listing = gosling_cli(home, repo, "sessions", "list")
        row = next(line for line in listing.stdout.splitlines() if line.startswith(sid))
        assert "change the greeting" in row, listing.stdout
        server.add(Turn(text="From the terminal again."))
        more = gosling_cli(
            home, repo, "run", "--base-url", server.url, "--provider", "anthropic",
            "--model", MODEL, "-r", sid, "-t", "one more",
        )  # fmt: skip
        assert more.returncode == 0, more.stderr
        assert more.stdout.strip() == "From the terminal again."
        # ... and `gosling session -r` on a terminal continues it with the whole history.
        server.add(Turn(text="And from the interactive session."))
        term = PtySession(
            ["session", "--base-url", server.url, "--provider", "anthropic", "--model", MODEL,
             "-r", sid],
            repo,
            agent_env(home),
        )  # fmt: skip
        try:
            term.expect("From the terminal again.", timeout=120)  # the history is shown
            term.send("last one\r")
            term.expect("And from the interactive session.", timeout=120)
            term.send("/exit\r")
            assert term.wait(120) == 0
        finally:
            term.close()
        sent = json.dumps(server.model_requests()[-1].body)
        assert "change the greeting" in sent and "one more" in sent and "last one" in sent
        server.assert_complete()


async def test_editor_buffers_are_read_and_written_through_the_editor(
    repo: Path, tmp_path: Path
) -> None:
    """With fs capabilities, the file tools see the unsaved buffer and edit it in the
    editor; the disk file is left to the editor to save."""
    home = tmp_path / "home"
    path = str(repo / "hello.txt")
    with FakeLLMServer() as server:
        server.add(
            call("developer__view", path="hello.txt"),
            call("developer__edit", path="hello.txt", old="unsaved", new="edited"),
            Turn(text="Edited the buffer."),
        )
        client = RecordingClient(buffers={path: "hello unsaved world\n"})
        async with running_agent(client, agent_args(server), agent_env(home), fs=True) as (
            conn,
            _,
            _,
        ):
            new = await conn.new_session(cwd=str(repo), mcp_servers=[])
            done = await conn.prompt(session_id=new.session_id, prompt=text("edit it"))
            assert done.stop_reason == "end_turn"
            # `/hints` answers in the editor without a model call.
            (repo / "AGENTS.md").write_text("Use tabs.\n")
            hints = await conn.prompt(session_id=new.session_id, prompt=text("/hints"))
            assert hints.stop_reason == "end_turn"
            assert str(repo / "AGENTS.md") in client.agent_text(new.session_id)
        viewed = json.dumps(server.model_requests()[1].body)
        assert "hello unsaved world" in viewed
        assert client.writes == [(path, "hello edited world\n")]
        assert (repo / "hello.txt").read_text() == "hello world\n"
        assert path in client.reads


def test_acp_help_names_the_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "gosling", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "acp" in result.stdout and "Agent Client Protocol" in result.stdout
