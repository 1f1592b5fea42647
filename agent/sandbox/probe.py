"""Is a bubblewrap sandbox usable on this machine? Asked once per process, then cached.

bwrap can be installed and still unusable: containers and some distributions forbid the
user namespaces it needs. The probe starts a real sandbox with every option gosling uses,
so "installed but unusable" is reported with bwrap's own reason instead of failing later,
in the middle of a tool call.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from gosling.agent.sandbox.policy import SandboxPolicy, bwrap_argv

PROBE_TIMEOUT_SECS = 10.0


@dataclass(frozen=True)
class BwrapStatus:
    path: str | None
    """The bwrap executable when it works here, else None."""
    problem: str = ""
    """Why there is no sandbox, for the one warning line the user sees."""


def probe_argv(bwrap: str) -> list[str]:
    """`true` in a sandbox with every namespace, mount and option that tool calls use."""
    policy = SandboxPolicy(mode="read-only", workspace=Path("/"), bwrap=bwrap)
    return bwrap_argv(policy, ["true"], cwd=Path("/"))


@functools.cache
def bwrap_status() -> BwrapStatus:
    """Find bwrap and check that it can build a sandbox here (cached for the process)."""
    if not sys.platform.startswith("linux"):
        return BwrapStatus(None, f"no sandbox is available on {sys.platform} (Linux only)")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return BwrapStatus(
            None, "bubblewrap is not installed (install the `bubblewrap` package to get one)"
        )
    try:
        done = subprocess.run(
            probe_argv(bwrap),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_SECS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return BwrapStatus(None, f"bwrap is installed but could not run: {exc}")
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return BwrapStatus(
            None,
            f"bwrap is installed but cannot create a sandbox here ({reason}); user namespaces "
            "may be disabled (sysctl kernel.unprivileged_userns_clone / "
            "kernel.apparmor_restrict_unprivileged_userns)",
        )
    return BwrapStatus(bwrap)
