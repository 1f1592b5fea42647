"""What the sandbox costs each tool command, before and after issue 32's rules.

`start_ms`: `true` run through `plan_launch` under the `workspace-write` policy (bwrap
builds its namespaces and mounts, execs `true`, exits), median and p90 of `ROUNDS` x `RUNS`
(the rounds alternate between before and after); beside
it `true` without a sandbox. `choose_ms`: picking the session's policy once (the bwrap
probe is cached per process and not included; issue 32 adds the look for unix sockets
under `$HOME`). The home is synthetic: either the credential locations issue 32 names
(`typical_home`) or every one that gosling hides (`every_location`, the most mounts a
command can get), with a git repository as the workspace and one socket.

`after` loads the seccomp filter as a run does (where the tree has one). `before` is the
same measurement on `BEFORE_COMMIT` (main before this work), checked out
in a temporary `git worktree` and imported from there by the same interpreter; `after` is
this checkout. `python -m bench.bench_sandbox [COMMIT]` compares against another commit.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BEFORE_COMMIT = "eb419ba"
ROUNDS = 4
RUNS = 10
"""Runs per round; the rounds alternate between the two trees, so a machine that gets
busier halfway through weighs on both alike."""

_MEASURE = """
import inspect, json, os, subprocess, sys, time
from pathlib import Path
from gosling.agent.sandbox import bwrap_status, choose_sandbox, plan_launch

workspace, runs = Path(sys.argv[1]), int(sys.argv[2])
gosling_home = Path(os.environ["GOSLING_HOME"])
hidden = [gosling_home / d for d in ("config", "data", "state")]
bwrap_status()
extra = {}
if "filters" in inspect.signature(choose_sandbox).parameters:  # the seccomp filter, as a run
    extra["filters"] = gosling_home / "state" / "sandbox"
picks = []
for _ in range(5):
    started = time.perf_counter()
    choice = choose_sandbox("workspace-write", workspace=workspace, hidden=hidden, **extra)
    picks.append(time.perf_counter() - started)
launch = plan_launch(["true"], cwd=workspace, env=dict(os.environ), sandbox=choice.policy)

def timed(argv):
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, env=launch.env, cwd=workspace, check=True)
        times.append((time.perf_counter() - started) * 1000)
    return times

print(json.dumps({
    "start_ms": timed(list(launch.argv)),
    "unsandboxed_ms": timed(["true"]),
    "choose_ms": [p * 1000 for p in picks],
    "bwrap_args": len(launch.argv) - 1,
}))
"""


TYPICAL_DIRS = (".ssh", ".aws", ".config/gcloud", ".kube", ".docker", ".config/gh")
TYPICAL_FILES = (".netrc", ".npmrc", ".pypirc", ".bash_history", ".zsh_history")
"""The credential locations issue 32 names: a well-used developer home."""


def _home(root: Path, full: bool) -> Path:
    """A home with the typical credential locations, or (`full`) every one that
    `agent.sandbox.choice` hides, and a socket."""
    from gosling.agent.sandbox.choice import CREDENTIAL_DIRS, CREDENTIAL_FILES

    home = root / "home"
    shutil.rmtree(home, ignore_errors=True)
    for name in CREDENTIAL_DIRS if full else TYPICAL_DIRS:
        (home / name).mkdir(parents=True, exist_ok=True)
    for name in CREDENTIAL_FILES if full else TYPICAL_FILES:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text("x\n")
    for name in ("projects/app/src", ".config/editor", ".local/share/tool"):
        (home / name).mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(home / "projects" / "app")], check=True)
    return home


def _measure(src: Path, root: Path) -> dict[str, Any]:
    workspace = root / "home" / "projects" / "app"
    env = {
        **os.environ,
        "PYTHONPATH": str(src),
        "HOME": str(root / "home"),
        "GOSLING_HOME": str(root / "gosling"),
    }
    env.pop("XDG_RUNTIME_DIR", None)
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(workspace), str(RUNS)],
        env=env,
        cwd=workspace,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def run(before_commit: str = BEFORE_COMMIT) -> dict[str, Any]:
    # Outside /tmp and /var/tmp, whose private copies would hide the home and its mounts.
    root = Path(tempfile.mkdtemp(prefix=".bench-sandbox-", dir=REPO))
    old = Path(tempfile.mkdtemp(prefix="bench-sandbox-before-")) / "tree"
    listeners = []
    figures = {}
    try:
        for name in ("config", "data", "state"):
            (root / "gosling" / name).mkdir(parents=True)
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(old), before_commit],
            cwd=REPO,
            check=True,
        )
        for full in (False, True):
            home = _home(root, full)
            listener = socket.socket(socket.AF_UNIX)
            listener.bind(str(home / ".local" / "share" / "tool" / "agent.sock"))
            listeners.append(listener)
            key = "every_location" if full else "typical_home"
            rounds: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
            for _ in range(ROUNDS):
                rounds["before"].append(_measure(old / "src", root))
                rounds["after"].append(_measure(REPO / "src", root))
            figures[key] = {tree: _summary(runs) for tree, runs in rounds.items()}
    finally:
        for listener in listeners:
            listener.close()
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(old)], cwd=REPO, capture_output=True
        )
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(old.parent, ignore_errors=True)
    for case in figures.values():
        added = case["after"]["start_ms"]["median"] - case["before"]["start_ms"]["median"]
        case["start_added_ms"] = added
    return {"before_commit": before_commit, "runs": ROUNDS * RUNS, **figures}


def _summary(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    def spread(key: str) -> dict[str, float]:
        times = sorted(t for r in rounds for t in r[key])
        return {"median": times[len(times) // 2], "p90": times[int(len(times) * 0.9)]}

    return {
        "start_ms": spread("start_ms"),
        "unsandboxed_ms": spread("unsandboxed_ms"),
        "choose_ms": spread("choose_ms")["median"],
        "bwrap_args": rounds[0]["bwrap_args"],
    }


if __name__ == "__main__":
    print(json.dumps(run(*sys.argv[1:2]), indent=2))
