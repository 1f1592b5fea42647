"""The one place where tool processes are started: shell commands and stdio MCP servers.

`plan_launch` decides how a command runs (inside bwrap or not, with which environment and
marker); `spawn` starts it for the shell tool, and the MCP transport hands the same plan to
the SDK, which starts the server itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gosling.agent.sandbox.lifetime import die_with_parent_hook, kill_marked, new_marker
from gosling.agent.sandbox.policy import CALL_MARKER_VAR, SandboxPolicy, bwrap_argv


@dataclass(frozen=True)
class Launch:
    """A planned tool process: what to exec, with which environment, where."""

    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: Path
    marker: str

    def kill_leftovers(self) -> int:
        """Stop processes of this launch that left its process group. Under bwrap too: the
        PID namespace dies with its first process, but bwrap arms `--die-with-parent` only
        after it has started, so a call stopped at that moment leaves the namespace alive."""
        return kill_marked(CALL_MARKER_VAR, self.marker)


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


async def spawn(launch: Launch, **stdio: Any) -> asyncio.subprocess.Process:
    """Start `launch` in a new session (its own process group), dying with gosling.

    Starting is never cut short: asyncio would kill the forked process and then wait for its
    pipes, which a sandbox started before bwrap armed `--die-with-parent` keeps open. A call
    cancelled while starting lets the start finish, then stops everything and re-raises.
    """
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *launch.argv,
            cwd=launch.cwd,
            env=launch.env,
            start_new_session=True,
            preexec_fn=die_with_parent_hook(),
            **stdio,
        )
    )
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
    await asyncio.to_thread(launch.kill_leftovers)
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
    the pipes to close, which a background child can hold open forever."""
    while process.returncode is None:  # noqa: ASYNC110 - no event exists for this
        await asyncio.sleep(0.01)
