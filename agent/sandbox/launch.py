"""The one place where tool processes are started: shell commands and stdio MCP servers.

`plan_launch` decides how a command runs (inside bwrap or not, with which environment and
marker); `spawn` starts it for the shell tool, and the MCP transport hands the same plan to
the SDK, which starts the server itself.

`spawn` starts the child without copying gosling (`vfork`; the parent-death signal is armed
by the exec guard of `lifetime.exec_guard`, not by a `preexec_fn`), and `wait_exit` is told
of the exit by the event loop's child watcher (no polling).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gosling.agent.sandbox.lifetime import PidWindow, exec_guard, kill_marked, new_marker
from gosling.agent.sandbox.policy import CALL_MARKER_VAR, SandboxPolicy, bwrap_argv

STREAM_LIMIT = 2**16
"""Buffer limit of the pipes' readers (asyncio's default)."""


@dataclass(frozen=True)
class Launch:
    """A planned tool process: what to exec, with which environment, where."""

    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: Path
    marker: str

    def kill_leftovers(self, process: asyncio.subprocess.Process | None = None) -> int:
        """Stop processes of this launch that left its process group. Under bwrap too: the
        PID namespace dies with its first process, but bwrap arms `--die-with-parent` only
        after it has started, so a call stopped at that moment leaves the namespace alive.
        Given the `process` `spawn` started, only processes started since are looked at."""
        protocol = getattr(process, "_protocol", None)
        window = protocol.window if isinstance(protocol, _WatchedProtocol) else None
        return kill_marked(CALL_MARKER_VAR, self.marker, window)


def plan_launch(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], sandbox: SandboxPolicy | None
) -> Launch:
    """How to run `argv`: `env` should already be free of credentials (`tool_environment`)."""
    marker = new_marker()
    full_env = {**env, CALL_MARKER_VAR: marker}
    if sandbox is None:
        return Launch(tuple(argv), full_env, cwd, marker)
    full_env["TMPDIR"] = "/tmp"
    wrapped = bwrap_argv(sandbox, argv, cwd=cwd)
    return Launch(tuple(wrapped), full_env, cwd, marker)


class _WatchedProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's protocol for `create_subprocess_exec`, plus a future set when the process
    exits (pipes may stay open: on Python 3.11 `Process.wait` also waits for them)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=STREAM_LIMIT, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()
        self.window: PidWindow | None = None

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


async def _start(launch: Launch, stdio: dict[str, Any]) -> asyncio.subprocess.Process:
    loop = asyncio.get_running_loop()
    argv, preexec = exec_guard(launch.argv)
    started = time.monotonic()
    transport, protocol = await loop.subprocess_exec(
        lambda: _WatchedProtocol(loop),
        *argv,
        cwd=launch.cwd,
        env=launch.env,
        start_new_session=True,
        preexec_fn=preexec,
        **stdio,
    )
    protocol.window = PidWindow(transport.get_pid(), started)
    return asyncio.subprocess.Process(transport, protocol, loop)


async def spawn(launch: Launch, **stdio: Any) -> asyncio.subprocess.Process:
    """Start `launch` in a new session (its own process group), dying with gosling.

    Starting is never cut short: asyncio would kill the forked process and then wait for its
    pipes, which a sandbox started before bwrap armed `--die-with-parent` keeps open. A call
    cancelled while starting lets the start finish, then stops everything and re-raises.
    """
    starting = asyncio.ensure_future(_start(launch, stdio))
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        await asyncio.shield(_abandon(starting, launch))
        raise


async def _abandon(starting: asyncio.Future[asyncio.subprocess.Process], launch: Launch) -> None:
    try:
        process = await starting
    except OSError:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    await asyncio.to_thread(launch.kill_leftovers, process)
    await release(process)


async def release(process: asyncio.subprocess.Process, grace: float = 2.0) -> None:
    """Release the process's pipes now, while the event loop runs (left to the garbage
    collector, they fail with "Event loop is closed"). Waits for its exit status first:
    closing earlier would reap it behind asyncio's child watcher."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(wait_exit(process), grace)
    transport = getattr(process, "_transport", None)
    if transport is not None and process.returncode is not None:
        transport.close()


async def wait_exit(process: asyncio.subprocess.Process) -> None:
    """Wait for the exit status only. Not `process.wait()`: on Python 3.11 it also waits for
    the pipes to close, which a background child can hold open forever. A process `spawn`
    started is awaited through its protocol's exit future; any other is polled."""
    protocol = getattr(process, "_protocol", None)
    if isinstance(protocol, _WatchedProtocol):
        await asyncio.shield(protocol.exited)  # one waiter's cancellation is not the others'
        return
    while process.returncode is None:  # noqa: ASYNC110 - no event for a foreign process
        await asyncio.sleep(0.01)
