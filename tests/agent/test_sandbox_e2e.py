"""`gosling run` against the loopback fake server: the sandbox holds end to end, and no tool
process outlives its call or gosling itself."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent.sandbox.conditions import PLANTED, PLANTED_MARKS, needs_bwrap
from tests.agent.test_run_e2e import gosling, gosling_env, run_args, tool
from tests.agent.tools.processes import is_running, processes_running, wait_until_sync
from tests.fakes import FakeLLMServer, Turn


@pytest.fixture
def server(fake_llm: FakeLLMServer) -> FakeLLMServer:
    return fake_llm


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    return tmp_path / "repo"


def events(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


@needs_bwrap
def test_a_shell_command_sees_no_key_and_writes_only_the_workspace(
    tmp_path: Path, repo: Path, server: FakeLLMServer
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    sibling = tmp_path / "sibling"
    sibling.mkdir()
    # Outside /tmp too: the private /tmp alone would hide the test's own dirs.
    elsewhere = Path(sys.prefix) / f"pwned-{os.getpid()}"
    command = (
        "env; cat /proc/*/environ /proc/*/cmdline /proc/$PPID/environ | tr '\\0' '\\n'; "
        'echo x > "$HOME/pwned"; echo x > "$GOSLING_HOME/pwned"; echo x > ../sibling/pwned; '
        f"echo x > {elsewhere}; echo ok > inside.txt"
    )
    server.add(tool("developer__shell", command=command), Turn(text="Done."))
    env = gosling_env(HOME=str(home), **PLANTED)
    try:
        result = gosling(
            run_args(server, "openai", "--output-format", "stream-json", "-t", "look"),
            repo,
            env=env,
        )
        assert not elsewhere.exists()
    finally:
        elsewhere.unlink(missing_ok=True)
    assert result.returncode == 0, result.stderr
    init, *_, last = events(result.stdout)
    assert init["type"] == "init" and init["sandbox"] == "workspace-write"
    assert last["type"] == "result" and last["sandbox"] == "workspace-write"
    tool_output = json.dumps(server.model_requests()[1].body)
    assert "Read-only file system" in tool_output
    for value in PLANTED_MARKS:
        assert value not in tool_output and value not in result.stdout
    assert (repo / "inside.txt").read_text() == "ok\n"
    gosling_home = Path(os.environ["GOSLING_HOME"])
    for outside in (home / "pwned", gosling_home / "pwned", sibling / "pwned"):
        assert not outside.exists(), outside


def test_without_bwrap_one_warning_and_the_run_goes_on(
    tmp_path: Path, repo: Path, server: FakeLLMServer
) -> None:
    empty_path = tmp_path / "bin"
    empty_path.mkdir()
    server.add(Turn(text="Fine."))
    env = gosling_env(PATH=str(empty_path))
    result = gosling(
        run_args(server, "openai", "--output-format", "stream-json", "-t", "hi"), repo, env=env
    )
    assert result.returncode == 0, result.stderr
    assert events(result.stdout)[0]["sandbox"] == "off"
    warnings = [line for line in result.stderr.splitlines() if "no sandbox" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: ")
    assert "bubblewrap" in warnings[0]
    off = gosling(
        run_args(server, "openai", "--sandbox", "off", "--output-format", "stream-json", "-t", "x"),
        repo,
        env=env,
    )
    assert events(off.stdout)[0]["sandbox"] == "off"
    assert "no sandbox" not in off.stderr


def test_a_setsid_child_holding_the_output_is_stopped_without_traceback(
    repo: Path, server: FakeLLMServer
) -> None:
    """The child writes its own pid before it becomes `sleep`: the test watches that one
    process (not any process of that name on the machine) and kills it if gosling did not."""
    pid_file = repo / "child.pid"
    child = f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 3000.301' & echo started"
    server.add(tool("developer__shell", command=child), Turn(text="Done."))
    result = gosling(run_args(server, "openai", "--sandbox", "off", "-t", "go"), repo)
    pid = int(pid_file.read_text()) if pid_file.exists() else None
    try:
        assert result.returncode == 0, result.stderr
        assert "Event loop is closed" not in result.stderr
        assert "Traceback" not in result.stderr
        assert pid is not None, "the tool command never ran"
        wait_until_sync(lambda: not _still_sleeping(pid), within=10)
    finally:
        if pid is not None and _still_sleeping(pid):
            os.kill(pid, signal.SIGKILL)


def _still_sleeping(pid: int) -> bool:
    """`pid` is still our `sleep 3000.301` (not a later process that got the same pid)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return cmdline == b"sleep\x003000.301\x00" and is_running(pid)


@pytest.mark.parametrize(
    ("sig", "sandbox"),
    [
        pytest.param(signal.SIGKILL, "workspace-write", marks=needs_bwrap, id="kill-sandboxed"),
        pytest.param(signal.SIGHUP, "workspace-write", marks=needs_bwrap, id="hup-sandboxed"),
        pytest.param(signal.SIGHUP, "off", id="hup-unsandboxed"),
        pytest.param(signal.SIGTERM, "off", id="term-unsandboxed"),
    ],
)
def test_tool_processes_die_with_gosling(
    repo: Path, server: FakeLLMServer, sig: signal.Signals, sandbox: str
) -> None:
    tag = f"{4000 + sig}.{len(sandbox)}"
    marks = [["sleep", f"{tag}1"], ["sleep", f"{tag}2"], ["sleep", f"{tag}3"]]
    command = f"setsid sleep {tag}1 > /dev/null 2>&1 & sleep {tag}2 & sleep {tag}3"
    server.add(tool("developer__shell", command=command))
    args = [sys.executable, "-m", "gosling", *run_args(server, "openai", "--sandbox", sandbox)]
    proc = subprocess.Popen(
        [*args, "-t", "wait"],
        cwd=repo,
        env=gosling_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_sync(lambda: all(processes_running(m) for m in marks), within=60)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    wait_until_sync(lambda: not any(processes_running(m) for m in marks), within=15)
    assert "Event loop is closed" not in err
    if sig != signal.SIGKILL:
        assert proc.returncode == 130, err


def test_a_sigkilled_gosling_takes_its_unsandboxed_command_with_it(
    repo: Path, server: FakeLLMServer
) -> None:
    """The command is started without copying gosling (vfork, through the exec guard); the
    parent-death signal it arms must still reach it when gosling is SIGKILLed."""
    mark = ["sleep", "4109.75"]
    server.add(tool("developer__shell", command=" ".join(mark)))
    args = [sys.executable, "-m", "gosling", *run_args(server, "openai", "--sandbox", "off")]
    proc = subprocess.Popen(
        [*args, "-t", "wait"],
        cwd=repo,
        env=gosling_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until_sync(lambda: bool(processes_running(mark)), within=60)
        (pid,) = processes_running(mark)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        wait_until_sync(lambda: not is_running(pid), within=15)
    finally:
        proc.kill()
        proc.wait(timeout=60)
        for leftover in processes_running(mark):
            os.kill(leftover, signal.SIGKILL)


@needs_bwrap
def test_a_sessions_commands_share_one_private_tmp(
    repo: Path, server: FakeLLMServer, _isolated_home: Path
) -> None:
    """A model writes a scratch file to /tmp in one command and uses it in the next (a
    patch, a repro script): that works within a session, while the machine's /tmp and the
    next session never see the file."""
    name = f"gosling-scratch-{os.getpid()}.txt"
    server.add(
        tool("developer__shell", command=f"echo kept-between-calls > /tmp/{name}"),
        tool("developer__shell", command=f"cat /tmp/{name}"),
        Turn(text="Done."),
        tool("developer__shell", command=f"cat /tmp/{name} || echo not-in-this-session"),
        Turn(text="Done."),
    )
    args = ("--output-format", "stream-json", "-t")
    first = gosling(run_args(server, "anthropic", *args, "write then read"), repo)
    assert first.returncode == 0, first.stderr
    assert not (Path("/tmp") / name).exists()
    second = gosling(run_args(server, "anthropic", *args, "read again"), repo)
    assert second.returncode == 0, second.stderr

    def shell_outputs(stdout: str) -> list[str]:
        return [json.dumps(e) for e in events(stdout) if e.get("type") == "tool_result"]

    _, read = shell_outputs(first.stdout)
    assert "kept-between-calls" in read
    [later] = shell_outputs(second.stdout)
    assert "not-in-this-session" in later and "kept-between-calls" not in later


@needs_bwrap
def test_a_venv_under_tmp_on_path_still_runs_in_the_sandbox(
    tmp_path: Path, repo: Path, server: FakeLLMServer
) -> None:
    """A virtualenv in /tmp (outside the project) on PATH: the private /tmp must not hide
    it, or every `python`/`pytest` the model runs there fails with 'not found'."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "lib").mkdir()
    (venv / "lib" / "greeting.txt").write_text("hello from the venv\n")
    script = venv / "bin" / "venv-tool"
    script.write_text('#!/bin/sh\ncat "$(dirname "$0")/../lib/greeting.txt"\n')
    script.chmod(0o755)
    server.add(tool("developer__shell", command="venv-tool"), Turn(text="Done."))
    env = gosling_env(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = gosling(
        run_args(server, "openai", "--output-format", "stream-json", "-t", "run it"),
        repo,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    [output] = [json.dumps(e) for e in events(result.stdout) if e.get("type") == "tool_result"]
    assert "hello from the venv" in output
