"""Is a bubblewrap sandbox usable on this machine? Asked once per process, then cached.

bwrap can be installed and still unusable: containers and some distributions forbid the
user namespaces it needs. The probe starts a real sandbox with every option gosling uses,
so "installed but unusable" is reported with bwrap's own reason instead of failing later,
in the middle of a tool call.

The user namespace is tried first with `--disable-userns` (bwrap 0.8+), then without it,
then not at all: root (containers, CI) can run bwrap without one when user namespaces are
disabled, and the sandbox then relies on its read-only `/proc` knobs and mounts alone.
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
    user_namespace: bool = True
    """bwrap can make a user namespace here."""
    no_nested_userns: bool = True
    """...and forbid the sandbox to make another (`--disable-userns`)."""


NAMESPACE_VARIANTS = ((True, True), (True, False), (False, False))
"""(user namespace, no nested one), best first."""


def probe_argv(bwrap: str, user_namespace: bool = True, no_nested: bool = True) -> list[str]:
    """`true` in a sandbox with every namespace, mount and option that tool calls use."""
    policy = SandboxPolicy(
        mode="read-only",
        workspace=Path("/"),
        bwrap=bwrap,
        user_namespace=user_namespace,
        no_nested_userns=no_nested,
    )
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
    return probe(bwrap)


def probe(bwrap: str) -> BwrapStatus:
    """Start a sandbox with `bwrap`, the strongest namespace variant first."""
    reason = ""
    for userns, no_nested in NAMESPACE_VARIANTS:
        try:
            done = subprocess.run(
                probe_argv(bwrap, userns, no_nested),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=PROBE_TIMEOUT_SECS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return BwrapStatus(None, f"bwrap is installed but could not run: {exc}")
        if done.returncode == 0:
            return BwrapStatus(bwrap, user_namespace=userns, no_nested_userns=no_nested)
        if not reason:
            reason = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return BwrapStatus(
        None,
        f"bwrap is installed but cannot create a sandbox here ({reason}); user namespaces "
        "may be disabled (sysctl kernel.unprivileged_userns_clone / "
        "kernel.apparmor_restrict_unprivileged_userns)",
    )
