"""The one place where tool processes are started: shell commands and stdio MCP servers.

`plan_launch` decides how a command runs (inside bwrap or not, with which environment and
marker); `spawn` starts it for the shell tool, and the MCP transport hands the same plan to
the SDK, which starts the server itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.sandbox.lifetime import die_with_parent_hook, kill_marked, new_marker
from agent.sandbox.policy import CALL_MARKER_VAR, SandboxPolicy, bwrap_argv


@dataclass(frozen=True)
class Launch:
    """A planned tool process: what to exec, with which environment, where."""

    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: Path
    marker: str
    sandboxed: bool

    def kill_leftovers(self) -> int:
        """Stop processes of this launch that left its process group (no-op under bwrap:
        the PID namespace already took them down)."""
        if self.sandboxed:
            return 0
        return kill_marked(CALL_MARKER_VAR, self.marker)


def plan_launch(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], sandbox: SandboxPolicy | None
) -> Launch:
    """How to run `argv`: `env` should already be free of credentials (`tool_environment`)."""
    marker = new_marker()
    full_env = {**env, CALL_MARKER_VAR: marker}
    if sandbox is None:
        return Launch(tuple(argv), full_env, cwd, marker, sandboxed=False)
    full_env["TMPDIR"] = "/tmp"
    wrapped = bwrap_argv(sandbox, argv, cwd=cwd)
    return Launch(tuple(wrapped), full_env, cwd, marker, sandboxed=True)


async def spawn(launch: Launch, **stdio: Any) -> asyncio.subprocess.Process:
    """Start `launch` in a new session (its own process group), dying with gosling."""
    return await asyncio.create_subprocess_exec(
        *launch.argv,
        cwd=launch.cwd,
        env=launch.env,
        start_new_session=True,
        preexec_fn=die_with_parent_hook(),
        **stdio,
    )
