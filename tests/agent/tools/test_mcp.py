"""MCP extensions end to end: real PyPI servers over stdio, an in-process HTTP server.

The stdio tests spawn processes, so there are only two and each starts its servers
concurrently.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gosling.agent.sandbox import choose_sandbox
from gosling.agent.tools import ExtensionConfig, ExtensionEvent, ExtensionManager, ToolContext
from gosling.prompts.locations import user_dirs
from tests.agent.sandbox.conditions import needs_bwrap
from tests.agent.tools.processes import children_running, wait_until

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc")


def server(name: str, module: str) -> ExtensionConfig:
    return ExtensionConfig(name, command=sys.executable, args=("-m", module))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh git repository with one untracked file."""
    path = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "hello.txt").write_text("hi\n")
    return path


async def test_time_and_git_servers_list_and_run_tools(repo: Path) -> None:
    ctx = ToolContext(repo)
    async with ExtensionManager() as manager:
        await manager.start_mcp(
            [server("time", "mcp_server_time"), server("git", "mcp_server_git")], repo
        )
        assert {(e.extension, e.kind) for e in manager.events} == {
            ("time", "started"),
            ("git", "started"),
        }
        names = {spec.name for spec in manager.specs()}
        assert {"time__get_current_time", "time__convert_time", "git__git_status"} <= names
        assert manager.annotations("time__get_current_time") is not None

        now = await manager.call("time__get_current_time", {"timezone": "UTC"}, ctx)
        assert not now.is_error
        assert json.loads(now.text_content())["timezone"] == "UTC"

        wrong = await manager.call("time__get_current_time", {"timezone": "Mars/Base"}, ctx)
        assert wrong.is_error and "Mars/Base" in wrong.text_content()

        status = await manager.call("git__git_status", {"repo_path": str(repo)}, ctx)
        assert not status.is_error
        assert "hello.txt" in status.text_content()
        assert len(children_running("mcp_server_")) == 2
    assert children_running("mcp_server_") == []
    assert (user_dirs().state / "logs" / "mcp-time.log").exists()


async def test_failed_and_dying_servers_are_reported_and_their_tools_removed(
    tmp_path: Path,
) -> None:
    events: asyncio.Queue[ExtensionEvent] = asyncio.Queue()
    manager = ExtensionManager(on_event=events.put_nowait, log_dir=tmp_path / "logs")
    # Reads requests, never answers: a server stuck in startup.
    silent = ("-c", "cat > /dev/null")
    hanging = ExtensionConfig("hangs", command="sh", args=silent, startup_timeout_secs=0.5)
    try:
        await manager.start_mcp(
            [
                server("time", "mcp_server_time"),
                ExtensionConfig("missing", command=str(tmp_path / "no-such-server")),
                ExtensionConfig(
                    "quits",
                    command=sys.executable,
                    args=("-c", "import sys; sys.exit('no config at /etc/srv.toml\\x1b[2J')"),
                ),
                hanging,
            ],
            tmp_path,
        )
        by_name = {e.extension: e for e in manager.events}
        assert by_name["time"].kind == "started"
        assert by_name["missing"].kind == "failed"
        assert "no-such-server': no such program" in by_name["missing"].message
        assert by_name["quits"].kind == "failed"
        assert "closed the connection" in by_name["quits"].message
        # What it printed last, without the escape sequence it tried on the terminal.
        assert "it said: no config at /etc/srv.toml?[2J;" in by_name["quits"].message
        assert by_name["hangs"].kind == "failed"
        assert "did not start within 0.5s" in by_name["hangs"].message
        assert children_running("cat > /dev/null") == []
        assert manager.names == ("time",)

        [pid] = children_running("mcp_server_time")
        os.kill(pid, signal.SIGKILL)
        while (event := await asyncio.wait_for(events.get(), 10)).kind != "stopped":
            pass
        assert event.extension == "time"
        assert (
            event.message == "extension 'time' stopped (the server exited); its tools were removed"
        )
        await wait_until(lambda: manager.specs() == [])
        late = await manager.call(
            "time__get_current_time", {"timezone": "UTC"}, ToolContext(tmp_path)
        )
        assert late.is_error
        assert "no longer available: extension 'time' stopped" in late.text_content()
    finally:
        await manager.close()


async def test_streamable_http_server_with_headers_and_a_call_timeout(tmp_path: Path) -> None:
    import uvicorn
    from mcp.server.mcpserver import MCPServer

    echo = MCPServer("echo")

    @echo.tool()
    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    @echo.tool()
    async def nap() -> str:
        """Take far longer than the call may."""
        await asyncio.Event().wait()
        return "rested"

    inner = echo.streamable_http_app()
    seen_headers: list[bytes | None] = []

    async def recording_app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen_headers.append(dict(scope["headers"]).get(b"x-team"))
        await inner(scope, receive, send)

    config = uvicorn.Config(recording_app, host="127.0.0.1", port=0, log_level="warning")
    web = uvicorn.Server(config)
    serving = asyncio.create_task(web.serve())
    try:
        await wait_until(lambda: web.started)
        port = web.servers[0].sockets[0].getsockname()[1]
        extension = ExtensionConfig(
            "echo",
            type="streamable_http",
            url=f"http://127.0.0.1:{port}/mcp",
            headers={"X-Team": "blue"},
            timeout_secs=0.3,
        )
        ctx = ToolContext(tmp_path)
        async with ExtensionManager(log_dir=tmp_path) as manager:
            await manager.start_mcp([extension], tmp_path)
            assert [spec.name for spec in manager.specs()] == ["echo__shout", "echo__nap"]
            result = await manager.call("echo__shout", {"text": "quiet"}, ctx)
            assert result.text_content() == "QUIET" and not result.is_error
            slow = await manager.call("echo__nap", {}, ctx)
            assert slow.is_error
            assert slow.text_content() == "echo__nap did not answer within 0.3s and was abandoned."
            assert manager.names == ("echo",)
        assert seen_headers and set(seen_headers) == {b"blue"}
    finally:
        web.should_exit = True
        await serving


@needs_bwrap
async def test_a_missing_program_is_named_inside_the_sandbox_too(tmp_path: Path) -> None:
    """Under bubblewrap a program that does not exist only showed as a server that hung up."""
    sandbox = choose_sandbox("workspace-write", workspace=tmp_path).policy
    manager = ExtensionManager(log_dir=tmp_path / "logs")
    try:
        await manager.start_mcp(
            [ExtensionConfig("typo", command="mcp-server-tiem")], tmp_path, sandbox=sandbox
        )
        [event] = manager.events
        assert event.kind == "failed"
        assert "cannot run 'mcp-server-tiem': no such program" in event.message
    finally:
        await manager.close()
