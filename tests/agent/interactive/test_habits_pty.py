"""Habits of Claude Code, Codex and goose users at a terminal (issue 31): `gosling` on a
pseudo-terminal against the fake model server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gosling.sessions import SqliteSessionStore
from tests.agent.interactive.pty_session import PtySession, gosling_env
from tests.agent.interactive.vt import screen_lines
from tests.fakes import FakeLLMServer, FakeToolCall, Turn


def _store() -> SqliteSessionStore:
    return SqliteSessionStore.open_default(Path(os.environ["GOSLING_HOME"]) / "data")


def _headless(repo: Path, server: FakeLLMServer, prompt: str) -> None:
    env = {**gosling_env(server), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "gosling", "run", prompt],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def _call(name: str, **arguments: object) -> Turn:
    return Turn(tool_calls=[FakeToolCall(name, dict(arguments))])


def test_the_spinner_is_cleared_before_each_progress_line(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(
        Turn(tool_calls=[FakeToolCall("developer__shell", {"command": "echo hi"})], delay=0.5),
        Turn(text="Said hi.", delay=0.5),
    )
    term = PtySession(["run", "say hi"], repo, gosling_env(server))
    try:
        assert term.wait(60) == 0
    finally:
        term.close()
    raw = term.raw.decode("utf-8", errors="replace")
    assert "working…" in raw  # the spinner did spin
    lines = screen_lines(raw)
    tool_line = next(line for line in lines if "● developer__shell" in line)
    assert tool_line.startswith("● developer__shell")
    assert not any("…" in line and ("●" in line or "✓" in line) for line in lines)
    assert "  ✓ developer__shell: 1 line" in lines


def test_resume_without_an_id_on_a_terminal_offers_a_picker(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(Turn(text="About the parser."), Turn(text="About the lexer."))
    _headless(repo, server, "explain the parser")
    _headless(repo, server, "explain the lexer")
    server.add(Turn(text="Back to the parser."))
    term = PtySession(["run", "-r", "and then?"], repo, gosling_env(server))
    try:
        listing = term.expect("Resume which session?", timeout=60)
        assert "1. " in listing and "explain the lexer" in listing and "just now" in listing
        assert "2. " in listing and "explain the parser" in listing
        term.send("2\r")
        term.expect("Back to the parser.", timeout=60)
        assert term.wait(60) == 0
    finally:
        term.close()
    last = str(server.model_requests()[-1].body["messages"])
    assert "About the parser." in last and "About the lexer." not in last


def test_session_errors_match_run_no_provider_and_a_missing_working_dir(
    repo: Path, server: FakeLLMServer
) -> None:
    env = {
        k: v
        for k, v in gosling_env(server).items()
        if not k.endswith("_API_KEY") and k not in ("GOSLING_PROVIDER", "GOSLING_BASE_URL")
    }
    env["OLLAMA_HOST"] = "127.0.0.1:9"
    for args in ([], ["session"]):
        term = PtySession(args, repo, env)
        try:
            term.expect("error: no model provider found", timeout=60)
            assert term.wait(60) == 2
        finally:
            term.close()
    # Longer than the terminal is wide: the error stays one line to copy (the terminal wraps it).
    missing = repo / ("a-long-folder-name-" * 6) / "nope"
    term = PtySession(["session", "--working-dir", str(missing)], repo, gosling_env(server))
    try:
        term.expect(f"error: --working-dir {missing} does not exist", timeout=60)
        term.expect(f"(mkdir -p {missing})", timeout=60)
        assert term.wait(60) == 2
    finally:
        term.close()
    assert "Traceback" not in term.text


def test_a_prompt_on_the_command_line_starts_a_named_session_and_c_continues_it(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(Turn(text="The login bug is in auth.py."), Turn(text="Still auth.py."))
    term = PtySession(["fix the login bug"], repo, gosling_env(server))
    try:
        term.expect("The login bug is in auth.py.", timeout=60)
        term.send("/exit\r")
        assert term.wait(60) == 0
    finally:
        term.close()
    store = _store()
    try:
        ((record),) = store.list_sessions()
    finally:
        store.close()
    assert record.name == "fix the login bug"

    term = PtySession(["-c"], repo, gosling_env(server))
    try:
        term.expect(
            "The login bug is in auth.py.", timeout=60
        )  # the last exchange, shown on resume
        term.send("where again?\r")
        term.expect("Still auth.py.", timeout=60)
        term.send("/exit\r")
        assert term.wait(60) == 0
    finally:
        term.close()


def test_always_allows_a_shell_prefix_and_edits_show_their_diff_first(
    repo: Path, server: FakeLLMServer
) -> None:
    (repo / "hello.txt").write_text("hello world\nsecond line\n")
    server.add(
        _call("developer__shell", command="git status"),
        _call("developer__shell", command="git status --short"),
        _call("developer__shell", command="git status; touch pwned"),
        _call("developer__edit", path="hello.txt", old="world", new="gosling"),
        _call("developer__write", path="notes/new.md", content="# Notes\nfirst\n"),
        Turn(text="All done."),
    )
    term = PtySession(["session", "--mode", "approve"], repo, gosling_env(server))
    try:
        term.expect("Ctrl-D: quit", timeout=60)
        term.send("go\r")
        term.expect("[a]lways `git status` commands", timeout=60)
        term.send("a")
        term.expect("developer__shell(git status) will not ask again this session", timeout=60)
        term.expect("allowed by a rule of this session", timeout=60)  # git status --short
        asked = term.expect("Allow?", timeout=60)  # the compound command asks, with no "always"
        assert "git status; touch pwned" in asked
        term.expect("[y]es / [n]o:", timeout=60)  # and no "[a]lways"
        term.send("n")
        diff = term.expect("Allow?", timeout=60)
        assert "--- a/hello.txt" in diff and "+++ b/hello.txt" in diff
        assert "-hello world" in diff and "+hello gosling" in diff and " second line" in diff
        term.send("y")
        new_file = term.expect("Allow?", timeout=60)
        assert "new file notes/new.md (2 lines)" in new_file and "+# Notes" in new_file
        term.send("y")
        term.expect("All done.", timeout=60)
        term.send("/exit\r")
        assert term.wait(60) == 0
    finally:
        term.close()
    assert "\x1b[31m" in term.raw.decode() or "\x1b[91m" in term.raw.decode()  # red removals
    assert not (repo / "pwned").exists()
    assert (repo / "hello.txt").read_text() == "hello gosling\nsecond line\n"
    assert (repo / "notes" / "new.md").read_text() == "# Notes\nfirst\n"


def test_configure_asks_and_writes_the_user_config(repo: Path, server: FakeLLMServer) -> None:
    env = {**gosling_env(server), "OPENAI_API_KEY": "test"}
    for name in ("GOSLING_PROVIDER", "GOSLING_MODEL", "GOSLING_BASE_URL"):
        env.pop(name)
    term = PtySession(["configure"], repo, env)
    try:
        term.expect("Provider", timeout=60)
        term.send("openai\r")
        term.expect("Model", timeout=60)
        term.send("gpt-5\r")
        term.expect("Base URL", timeout=60)
        term.send("\r")
        term.expect("Permission mode", timeout=60)
        term.send("approve\r")
        term.expect("wrote", timeout=60)
        assert term.wait(60) == 0
    finally:
        term.close()
    config = Path(os.environ["GOSLING_HOME"]) / "config" / "config.toml"
    text = config.read_text()
    assert 'provider = "openai"' in text and 'model = "gpt-5"' in text
    assert 'mode = "approve"' in text and "base_url" not in text
