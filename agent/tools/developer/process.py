"""Running a shell command so that nothing it starts outlives the call.

The command runs in a new session (its own process group) with stdin on /dev/null, so it
cannot wait for keyboard input and everything it starts can be signalled at once; inside the
bubblewrap sandbox when one is configured (`agent.sandbox`). On timeout or cancellation the
group gets SIGTERM, then SIGKILL after a grace period. A background child that still holds
the output pipes after the shell exits is stopped at once (otherwise the call would hang
until the timeout), and when the call ends, every process it started is stopped, including
`setsid` ones that left the group (`agent.sandbox.lifetime` says how).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gosling.agent.sandbox import Launch, SandboxPolicy, plan_launch, spawn, tool_environment
from gosling.agent.sandbox.launch import release, wait_exit
from gosling.agent.tools.developer.git_safety import hardened_git_environment
from gosling.agent.tools.developer.output import CapturedOutput, StreamCapture

PIPE_GRACE_SECS = 0.5
"""How long to wait for the output pipes to close after the shell itself has exited."""
KILL_GRACE_SECS = 2.0
"""Between SIGTERM and SIGKILL."""


def shell_environment(
    base: Mapping[str, str] | None = None, *, allow: Collection[str] = ()
) -> dict[str, str]:
    """The environment for shell commands: ours without any credential-like variable
    (`redact.is_credential_env`: API keys, tokens, passwords, URLs with passwords) except
    those the user named in `allow`, no prompts, and git refusing bare repositories it
    only discovered (`git_safety`). The same rule holds with or without the
    sandbox: a key the command never gets cannot end up in its output (and the redactor
    still hides an allowed one's value wherever the command prints it)."""
    base = os.environ if base is None else base
    kept = tool_environment(base, keep={name: base[name] for name in allow if name in base})
    return hardened_git_environment(kept)


def default_shell() -> str:
    """bash when installed, else sh. `$SHELL` is ignored: models write POSIX/bash syntax."""
    return shutil.which("bash") or shutil.which("sh") or "/bin/sh"


@dataclass(frozen=True)
class ShellOutcome:
    exit_code: int | None
    stdout: CapturedOutput
    stderr: CapturedOutput
    timed_out: bool = False
    stopped_background: bool = False
    """Background processes kept the output open after the shell exited and were stopped."""


async def run_command(
    command: str,
    *,
    cwd: Path,
    timeout: float,  # noqa: ASYNC109 - enforced inside, on the whole process group
    shell: str | None = None,
    env: Mapping[str, str] | None = None,
    max_lines: int = 2000,
    max_bytes: int = 50_000,
    spill_dir: Path | None = None,
    sandbox: SandboxPolicy | None = None,
) -> ShellOutcome:
    """Run `command` with `shell -c` (inside `sandbox` when given); when this returns, every
    process the command started is gone, including ones that left its process group."""
    launch = plan_launch(
        [shell or default_shell(), "-c", command],
        cwd=cwd,
        env=env if env is not None else shell_environment(),
        sandbox=sandbox,
    )
    process = await spawn(
        launch,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        return await _collect(process, launch, timeout, max_lines, max_bytes, spill_dir)
    finally:
        await asyncio.shield(_reap(process, launch))


async def _reap(process: asyncio.subprocess.Process, launch: Launch) -> None:
    """Stop whatever the call left behind and release the pipes."""
    await asyncio.to_thread(launch.kill_leftovers, process)
    await release(process, KILL_GRACE_SECS)


async def _collect(
    process: asyncio.subprocess.Process,
    launch: Launch,
    timeout: float,  # noqa: ASYNC109 - enforced here, on the whole process group
    max_lines: int,
    max_bytes: int,
    spill_dir: Path | None,
) -> ShellOutcome:
    captures = [
        StreamCapture(label, max_lines=max_lines, max_bytes=max_bytes, spill_dir=spill_dir)
        for label in ("stdout", "stderr")
    ]
    assert process.stdout is not None and process.stderr is not None
    readers = asyncio.gather(
        captures[0].read_all(process.stdout), captures[1].read_all(process.stderr)
    )
    timed_out = stopped_background = False
    try:
        async with asyncio.timeout(timeout):
            await _wait_exit_or_eof(process, readers)
            if not readers.done():
                done, _ = await asyncio.wait({readers}, timeout=PIPE_GRACE_SECS)
                stopped_background = not done
    except TimeoutError:
        timed_out = True
    except asyncio.CancelledError:
        await asyncio.shield(_stop(process, readers, launch))
        raise
    if timed_out or stopped_background:
        await _stop(process, readers, launch)
    else:
        await readers
    return ShellOutcome(
        process.returncode if not timed_out else None,
        captures[0].result(),
        captures[1].result(),
        timed_out=timed_out,
        stopped_background=stopped_background,
    )


Readers = asyncio.Future[tuple[None, None]]


async def _wait_exit_or_eof(process: asyncio.subprocess.Process, readers: Readers) -> None:
    """Return once the shell has exited (pipes may still be held open by its children)."""
    exited = asyncio.ensure_future(wait_exit(process))
    try:
        waiting: list[asyncio.Future[Any]] = [exited, readers]
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if readers.done():
            await exited
    finally:
        exited.cancel()


async def _stop(process: asyncio.subprocess.Process, readers: Readers, launch: Launch) -> None:
    """Make sure no member of the group survives, nor anything that left it (`setsid`), then
    collect the readers."""
    await terminate_group(process.pid)
    await asyncio.to_thread(launch.kill_leftovers, process)
    with contextlib.suppress(TimeoutError, asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(readers), KILL_GRACE_SECS)
    if not readers.done():
        readers.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await readers
    if process.returncode is None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wait_exit(process), KILL_GRACE_SECS)


async def terminate_group(pgid: int, grace: float = KILL_GRACE_SECS) -> None:
    """SIGTERM the process group, SIGKILL whatever is left after `grace` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if not group_alive(pgid):
                return
            await asyncio.sleep(0.02)


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies do not count)."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for entry in os.scandir(proc):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False
