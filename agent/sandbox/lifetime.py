"""Keeping tool processes from outliving their call or gosling.

Three layers, strongest first:
- under bwrap, the call runs in its own PID namespace with `--die-with-parent`: when the
  command ends, or gosling dies in any way (SIGKILL included), the kernel kills every process
  in the namespace, `setsid` and double-forked ones too;
- on Linux, the direct child gets a parent-death signal (`PR_SET_PDEATHSIG`), so a SIGKILLed
  gosling still takes the command (or bwrap) down with it;
- every tool process carries a per-call marker in its environment, and at the end of the
  call `/proc` is scanned for processes still carrying it (they may have left the process
  group with `setsid`, or a sandbox may have been stopped before bwrap armed
  `--die-with-parent`); those are killed. Without bwrap, a process that wipes its own
  environment escapes this net, and a SIGKILLed gosling leaves the command's descendants
  running (only the direct child dies): only the sandbox closes those gaps.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import sys
from collections.abc import Callable
from pathlib import Path

PR_SET_PDEATHSIG = 1


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


def marked_processes(var: str, marker: str) -> list[int]:
    """Live processes (other than gosling) whose environment has `var=marker`."""
    needle = f"{var}={marker}".encode()
    found: list[int] = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    own = os.getpid()
    for entry in os.scandir(proc):
        if not entry.name.isdigit() or int(entry.name) == own:
            continue
        try:
            environ = Path(entry.path, "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def kill_marked(var: str, marker: str) -> int:
    """SIGKILL every process still carrying the call's marker; how many there were."""
    pids = marked_processes(var, marker)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(pids)
