"""Keeping tool processes from outliving their call or gosling.

Three layers, strongest first:
- under bwrap, the call runs in its own PID namespace with `--die-with-parent`: when the
  command ends, or gosling dies in any way (SIGKILL included), the kernel kills every process
  in the namespace, `setsid` and double-forked ones too;
- on Linux, the direct child gets a parent-death signal (`PR_SET_PDEATHSIG`), so a SIGKILLed
  gosling still takes the command (or bwrap) down with it. The child is started without
  copying gosling (`vfork`: no `preexec_fn`) through a two-exec guard, `setpriv --pdeathsig
  KILL` then `sh`, which runs the command only if its parent is still gosling once the signal
  is armed (`exec_guard`); without `setpriv` a `preexec_fn` arms it (and CPython `fork`s);
- every tool process carries a per-call marker in its environment, and at the end of the
  call `/proc` is scanned for processes still carrying it (they may have left the process
  group with `setsid`, or a sandbox may have been stopped before bwrap armed
  `--die-with-parent`); those are killed. Only processes started since the call's first one
  are read (pids are handed out in order: `PidWindow`), so a short call reads a handful of
  `environ` files, not every process's. Without bwrap, a process that wipes its own
  environment escapes this net, and a SIGKILLed gosling leaves the command's descendants
  running (only the direct child dies): only the sandbox closes those gaps.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PR_SET_PDEATHSIG = 1
GUARD_SCRIPT = '[ "$PPID" = "$1" ] || exit 125; shift; exec "$@"'
"""Run by `sh` once `setpriv` has armed the parent-death signal: if gosling died before that
(the child now has another parent), give up instead of running the command unwatched."""
PROC = Path("/proc")
FULL_SCAN_AFTER_SECS = 5.0
"""A call longer than this may have seen pids wrap around (`pid_max`), so its leftovers
are looked for among every process."""


def new_marker() -> str:
    """A token that identifies one tool call's processes."""
    return secrets.token_hex(12)


def die_with_parent_hook() -> Callable[[], None] | None:
    """A `preexec_fn` that makes the child get SIGKILL when gosling dies (Linux), else None.

    libc is loaded here, before the fork, so the child only makes one system call.
    """
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # gosling died before the signal was armed
            os._exit(1)

    return hook


@cache
def _guard_tools() -> tuple[str, str] | None:
    setpriv = shutil.which("setpriv")
    shell = shutil.which("sh") or "/bin/sh"
    return (setpriv, shell) if setpriv and os.path.exists(shell) else None


def exec_guard(argv: Sequence[str]) -> tuple[list[str], Callable[[], None] | None]:
    """How to start `argv` so that it dies with gosling: the command line to exec and the
    `preexec_fn` (None whenever possible, so CPython starts the child with `vfork` instead of
    copying the interpreter with `fork`)."""
    if not sys.platform.startswith("linux"):
        return list(argv), None
    tools = _guard_tools()
    if tools is None:
        return list(argv), die_with_parent_hook()
    setpriv, shell = tools
    guard = [setpriv, "--pdeathsig", "KILL", "--", shell, "-c", GUARD_SCRIPT, "gosling-guard"]
    return [*guard, str(os.getpid()), *argv], None


@dataclass(frozen=True)
class PidWindow:
    """The pids a call's processes can have: those handed out since its first process
    started (`first`), when the call is short enough that pids cannot have wrapped past it."""

    first: int
    started: float
    """`time.monotonic()` when the first process started."""

    def admits(self, proc: Path = PROC) -> Callable[[int], bool]:
        """A test for pids to look at now (every pid when the window cannot be trusted)."""
        if time.monotonic() - self.started > FULL_SCAN_AFTER_SECS:
            return lambda pid: True
        try:
            last = int((proc / "sys/kernel/ns_last_pid").read_text())
        except (OSError, ValueError):
            return lambda pid: True
        first = self.first
        if last >= first:
            return lambda pid: first <= pid <= last
        return lambda pid: pid >= first or pid <= last  # wrapped around pid_max since


def marked_processes(
    var: str, marker: str, window: PidWindow | None = None, proc: Path = PROC
) -> list[int]:
    """Live processes (other than gosling) whose environment has `var=marker`, in pid order;
    with a `window`, only processes started since the call began are read. `proc` is where
    procfs is mounted."""
    needle = f"{var}={marker}".encode()
    found: list[int] = []
    try:
        names = os.listdir(proc)
    except OSError:
        return found
    own = os.getpid()
    admits = window.admits(proc) if window is not None else (lambda pid: True)
    for pid in sorted(int(name) for name in names if name.isdigit()):
        if pid == own or not admits(pid):
            continue
        try:
            environ = (proc / str(pid) / "environ").read_bytes()
        except OSError:  # gone since, or not ours to read: the others still are
            continue
        if needle in environ.split(b"\0"):
            found.append(pid)
    return found


def kill_marked(var: str, marker: str, window: PidWindow | None = None) -> int:
    """SIGKILL every process still carrying the call's marker; how many there were."""
    pids = marked_processes(var, marker, window)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(pids)
