"""Run one hook command: the event's JSON on stdin, a timeout, output capped and redacted.

A hook is a command the user configured, so it runs like one they typed: with bash (sh when
there is none), in the working dir, with the user's environment plus `CLAUDE_PROJECT_DIR` /
`GOSLING_PROJECT_DIR`, outside the tool sandbox. It gets its own process group, and at the
timeout the whole group is killed, so a hook that starts a server or hangs on a pipe cannot
hold the session. Nothing raised here escapes: a hook that cannot start is an outcome too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from gosling.redact import redact

OUTPUT_CAP_BYTES = 1_000_000
"""Bytes of stdout or stderr read from a hook; the rest is drained and dropped."""
TEXT_CAP_CHARS = 10_000
"""Characters of a hook's output that reach the model or the user (Claude Code's cap)."""
PIPE_GRACE_SECS = 2.0
"""How long output may still arrive after the hook exited (a child holding the pipe)."""


@dataclass(frozen=True)
class HookRun:
    """What one hook process did."""

    exit_code: int | None
    """None when it timed out or could not start."""
    stdout: str
    stderr: str
    duration_ms: int
    timed_out: bool = False
    failed_to_start: str | None = None


def cap(text: str, limit: int = TEXT_CAP_CHARS) -> str:
    """`text` cut to `limit` characters, saying so."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[hook output cut at {limit} characters]"


def _shell() -> list[str]:
    bash = shutil.which("bash")
    return [bash, "-c"] if bash else ["/bin/sh", "-c"]


async def run_hook(
    command: str,
    payload: bytes,
    *,
    cwd: Path,
    project_dir: Path,
    timeout: float,  # noqa: ASYNC109
) -> HookRun:
    """Run `command` with `payload` on stdin (see the module docstring)."""
    started = time.monotonic()
    env = dict(os.environ)
    env["CLAUDE_PROJECT_DIR"] = str(project_dir)
    env["GOSLING_PROJECT_DIR"] = str(project_dir)
    try:
        proc = await asyncio.create_subprocess_exec(
            *_shell(),
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        return HookRun(None, "", "", _ms(started), failed_to_start=str(exc))
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    feeding = asyncio.ensure_future(_feed(proc.stdin, payload))
    reading = [asyncio.ensure_future(_read(proc.stdout)), asyncio.ensure_future(_read(proc.stderr))]
    timed_out = False
    try:
        await asyncio.wait_for(proc.wait(), timeout)
        _, pending = await asyncio.wait(reading, timeout=PIPE_GRACE_SECS)
        if pending:
            _kill_group(proc.pid)
    except TimeoutError:
        timed_out = True
        _kill_group(proc.pid)
    except asyncio.CancelledError:
        _kill_group(proc.pid)
        raise
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        _, stuck = await asyncio.wait(reading, timeout=PIPE_GRACE_SECS)
        for task in [*stuck, feeding]:
            task.cancel()
        await asyncio.gather(*stuck, feeding, return_exceptions=True)
    out, err = (task.result() if not task.cancelled() else "" for task in reading)
    return HookRun(
        None if timed_out else proc.returncode,
        redact(out),
        redact(err),
        _ms(started),
        timed_out=timed_out,
    )


async def _feed(stdin: asyncio.StreamWriter, payload: bytes) -> None:
    """Write the payload; a hook that exits without reading it is not an error."""
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(payload)
        await stdin.drain()
        stdin.close()
        await stdin.wait_closed()


async def _read(stream: asyncio.StreamReader) -> str:
    chunks: list[bytes] = []
    size = 0
    while chunk := await stream.read(65536):
        if size < OUTPUT_CAP_BYTES:
            chunks.append(chunk[: OUTPUT_CAP_BYTES - size])
        size += len(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
