"""Shell commands and an MCP server inside the real bubblewrap sandbox.

Skipped only where bwrap cannot run; `.ci/run` installs it, so CI runs these.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from gosling.agent.sandbox import SandboxPolicy, choose_sandbox
from gosling.agent.tools import DeveloperSettings, ExtensionConfig, ExtensionManager, ToolContext
from gosling.agent.tools.developer import developer_extension
from tests.agent.sandbox.conditions import PLANTED, PLANTED_MARKS, needs_bwrap
from tests.agent.tools.processes import processes_running, wait_until

pytestmark = needs_bwrap
BIG_SERVER = Path(__file__).resolve().parents[2] / "fakes" / "big_mcp_server.py"


def policy(workspace: Path, mode: str = "workspace-write", **extra: object) -> SandboxPolicy:
    choice = choose_sandbox(mode, workspace=workspace, **extra)  # type: ignore[arg-type]
    assert choice.policy is not None
    return choice.policy


async def shell(workspace: Path, command: str, sandbox: SandboxPolicy, **extra: object) -> str:
    ext = developer_extension(DeveloperSettings(sandbox=sandbox))
    tool = next(t for t in ext.tools() if t.name == "shell")
    result = await tool.call({"command": command, **extra}, ToolContext(workspace))
    return result.text_content()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


async def test_no_key_is_visible_through_env_or_proc(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)
    out = await shell(
        workspace,
        "env; cat /proc/*/environ /proc/*/cmdline /proc/$PPID/environ | tr '\\0' '\\n'; "
        "ls /proc | grep -c '^[0-9]'",
        policy(workspace),
    )
    assert "Exit code: 0" in out
    for value in PLANTED_MARKS:
        assert value not in out
    process_count = int(out.split("--- stdout ---\n")[1].split("\n--- stderr")[0].splitlines()[-1])
    assert process_count < 10, "the sandbox sees only its own processes"


async def test_writes_land_only_in_the_workspace_and_private_tmp(
    tmp_path: Path, workspace: Path
) -> None:
    sibling = tmp_path / "sibling"
    sibling.mkdir()
    home = tmp_path / "gosling_home"
    home.mkdir()
    out = await shell(
        workspace,
        f"echo ok > inside.txt; echo x > {sibling}/pwned; echo x > {home}/pwned; "
        "echo x > /tmp/scratch && cat /tmp/scratch; echo done",
        policy(workspace, hidden=[home]),
    )
    assert "done" in out
    assert (workspace / "inside.txt").read_text() == "ok\n"
    assert not (sibling / "pwned").exists() and not (home / "pwned").exists()
    assert not Path("/tmp/scratch").exists()  # noqa: ASYNC240 - a test checking one path


async def test_a_file_kept_inside_a_hidden_directory_stays_readable_and_nothing_else(
    tmp_path: Path, workspace: Path
) -> None:
    """Like `/etc/resolv.conf`'s target under a hidden `/run` (systemd-resolved): hidden with
    the rest of `/run`, no name would resolve in the sandbox. A credential directory hidden
    before it does not change that."""
    credentials, run = tmp_path / "credentials", tmp_path / "run"
    (run / "resolve").mkdir(parents=True)
    credentials.mkdir()
    kept = run / "resolve" / "stub-resolv.conf"
    kept.write_text("nameserver 127.0.0.53\n")
    (run / "user-socket").write_text("QZK-hidden-5555\n")
    sandbox = replace(policy(workspace), hidden=(credentials, run), kept=(kept,))
    out = await shell(workspace, f"cat {kept}; cat {run}/user-socket; echo done", sandbox)
    assert "nameserver 127.0.0.53" in out
    assert "done" in out and "QZK-hidden-5555" not in out


async def test_read_only_mode_refuses_workspace_writes(workspace: Path) -> None:
    out = await shell(workspace, "echo x > inside.txt", policy(workspace, mode="read-only"))
    assert "Read-only file system" in out
    assert not (workspace / "inside.txt").exists()


async def test_no_network_unless_allowed(workspace: Path) -> None:
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    probe = (
        f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {port}))\""
    )
    try:
        closed = await shell(workspace, probe, policy(workspace))
        opened = await shell(workspace, probe, policy(workspace, network=True))
    finally:
        server.close()
    assert "Exit code: 1" in closed and "ConnectionRefusedError" in closed
    assert "Exit code: 0" in opened


@pytest.mark.parametrize("cancel", [False, True], ids=["call-ends", "call-cancelled"])
async def test_setsid_and_background_children_die_with_the_call(
    workspace: Path, cancel: bool
) -> None:
    marks = [["sleep", "3000.101"], ["sleep", "3000.102"]]
    command = "setsid sleep 3000.101 > /dev/null 2>&1 & sleep 3000.102 > /dev/null 2>&1 & " + (
        "sleep 3000" if cancel else "echo started"
    )
    call = asyncio.create_task(shell(workspace, command, policy(workspace)))
    await wait_until(lambda: all(processes_running(m) for m in marks) or call.done())
    if cancel:
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
    else:
        assert "started" in await call
    await wait_until(lambda: not any(processes_running(m) for m in marks), within=10)


async def test_an_mcp_server_works_inside_the_sandbox(workspace: Path) -> None:
    config = ExtensionConfig("time", command=sys.executable, args=("-m", "mcp_server_time"))
    async with ExtensionManager() as manager:
        await manager.start_mcp([config], workspace, sandbox=policy(workspace))
        assert [(e.extension, e.kind) for e in manager.events] == [("time", "started")]
        result = await manager.call(
            "time__get_current_time", {"timezone": "UTC"}, ToolContext(workspace)
        )
        assert not result.is_error
        assert json.loads(result.text_content())["timezone"] == "UTC"
        (server,) = processes_running([sys.executable, "-m", "mcp_server_time"])
        status = Path(f"/proc/{server}/status").read_text()  # noqa: ASYNC240 - test
        nspid = status.split("NSpid:")[1].split("\n")[0]
        assert len(nspid.split()) == 2, "the server runs in its own PID namespace"
    await wait_until(
        lambda: not processes_running([sys.executable, "-m", "mcp_server_time"]), within=10
    )


async def test_an_mcp_server_script_under_tmp_outside_the_workspace_starts(
    tmp_path: Path, workspace: Path
) -> None:
    """A server run by path from a clone under /tmp (the project's own test server, a
    checkout's script): the private /tmp must not hide it."""
    script = tmp_path / "clone" / "big_mcp_server.py"
    script.parent.mkdir()
    shutil.copy(BIG_SERVER, script)
    config = ExtensionConfig("big", command=sys.executable, args=(str(script),))
    async with ExtensionManager() as manager:
        await manager.start_mcp([config], workspace, sandbox=policy(workspace))
        assert [(e.extension, e.kind) for e in manager.events] == [("big", "started")]
        result = await manager.call("big__dump", {"megabytes": 0}, ToolContext(workspace))
        assert not result.is_error


async def test_an_mcp_server_writes_its_own_cache_never_the_users(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`uvx`/`npx` launchers download into the cache they are pointed at: the server's own,
    while the user's `~/.cache` (where gosling and pre-commit live) stays read-only."""
    home = Path(tempfile.mkdtemp(prefix="sbx-home-", dir=sys.prefix))  # visible: not /tmp
    try:
        (home / ".cache").mkdir()
        monkeypatch.setenv("HOME", str(home))
        launcher = (
            'touch "$XDG_CACHE_HOME/downloaded"; touch "$HOME/.cache/planted"; '
            f"exec {sys.executable} -m mcp_server_time"
        )
        config = ExtensionConfig("time", command="sh", args=("-c", launcher))
        caches = tmp_path / "state" / "mcp-cache"
        sandbox = policy(workspace, server_caches=caches)
        async with ExtensionManager() as manager:
            await manager.start_mcp([config], workspace, sandbox=sandbox)
            assert [(e.extension, e.kind) for e in manager.events] == [("time", "started")]
        assert (caches / "time" / "downloaded").exists()
        assert not (home / ".cache" / "planted").exists()
    finally:
        shutil.rmtree(home, ignore_errors=True)
