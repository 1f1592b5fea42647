"""The bash oracle: what a command line really executes, found by running it under strace.

Every line runs with real bash (`bash -c`, as the shell tool runs it) inside one throwaway
bubblewrap sandbox (read-only root, a tmpfs for all work, no network, its own PID
namespace), each in a fresh copy of a template checkout (files, a git repository, and a
bare repository committed inside it whose `core.fsmonitor` deletes a file), with the
environment the shell tool gives commands (`hardened_git_environment`). strace records
every successful execve; the scratch copy is compared before and after. Lines run in
parallel batches inside the one sandbox (`sandbox_driver.py`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from gosling.agent.tools.developer.git_safety import hardened_git_environment

DRIVER = Path(__file__).with_name("sandbox_driver.py")
TEMPLATE_FILES = {
    "a": "alpha\n",
    "b": "beta\n",
    "x": "x\n",
    "y": "y\n",
    "sub/f": "f\n",
    "payload": "a[$(rm -f y)]\n",
}
FSMONITOR = "rm -f y; touch FSMON; false"


@dataclass(frozen=True)
class Outcome:
    """What one command line did when bash ran it."""

    execs: tuple[tuple[str, ...], ...]
    """(path, argv0, argv1, ...) of every program that was executed."""
    changed: tuple[str, ...]
    """Files and directories created, removed or modified outside `.git/`."""

    def ran(self, program: str) -> bool:
        """The program was executed, by path or under another argv[0] (`exec -a ls rm`)."""
        return any(program in (_base(call[0]), _base(call[1] if len(call) > 1 else ""))
                   for call in self.execs)  # fmt: skip


def _base(text: str) -> str:
    return text.rstrip("/").rsplit("/", 1)[-1]


def unavailable() -> str | None:
    """Why the oracle cannot run here, or None."""
    for tool in ("bwrap", "strace", "bash", "git", "timeout"):
        if shutil.which(tool) is None:
            return f"the bash oracle needs {tool} (.ci/run installs bubblewrap and strace)"
    probe = subprocess.run(
        [*_sandbox(Path("/"), Path("/")), "true"], capture_output=True, text=True, check=False
    )
    if probe.returncode != 0:
        return f"bubblewrap cannot make a sandbox here: {probe.stderr.strip()}"
    return None


def _sandbox(source: Path, out: Path) -> list[str]:
    return [
        "bwrap", "--ro-bind", "/", "/", "--tmpfs", "/tmp", "--dev", "/dev", "--proc", "/proc",
        "--ro-bind", str(source), "/tmp/in", "--bind", str(out), "/tmp/out",
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
        # Root outside must not be root inside: corpus lines such as `date -s` or `hostname`
        # changed the host's clock when bwrap ran as root with its capabilities (lead's fix).
        "--unshare-user", "--cap-drop", "ALL",
        "--chdir", "/tmp",
    ]  # fmt: skip


def make_template(root: Path) -> Path:
    """The checkout every line runs in (`root/template`): judge lines against it too."""
    template = root / "template"
    for relative, text in TEMPLATE_FILES.items():
        path = template / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "HOME": str(root)}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1"}
    git = ["git", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", str(template)], check=True, env=env)
    subprocess.run([*git, "-C", str(template), "add", "-A"], check=True, env=env)
    subprocess.run([*git, "-C", str(template), "commit", "-qm", "t"], check=True, env=env)
    (template / "a").write_text("alpha changed\n")
    bare = template / "evil.git"
    subprocess.run([*git, "init", "-q", "--bare", str(bare)], check=True, env=env)
    for key, value in (("core.worktree", ".."), ("core.bare", "false"), ("core.fsmonitor",
                                                                           FSMONITOR)):  # fmt: skip
        subprocess.run(["git", "config", "-f", str(bare / "config"), key, value], check=True)
    return template


def run_lines(lines: list[str], root: Path, *, workers: int | None = None) -> list[Outcome]:
    """Run every line in the sandbox; outcomes in the same order."""
    source, out = root / "in", root / "out"
    out.mkdir()
    if not (source / "template").exists():
        make_template(source)
    shutil.copy(DRIVER, source / "driver.py")
    (source / "lines.json").write_text(json.dumps(lines))
    env = hardened_git_environment(
        {
            "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "HOME": "/tmp/work/home",
            "TMPDIR": "/tmp/work/tmp",
            "LANG": "C.UTF-8",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
    )
    (source / "env.json").write_text(json.dumps(env))
    count = str(workers or max(2, (os.cpu_count() or 2) * 2))
    # The driver needs only the standard library: run it with the base interpreter, which a
    # checkout under /tmp does not hide (the sandbox's /tmp is empty; the venv may be there).
    python = getattr(sys, "_base_executable", sys.executable)
    driver = subprocess.run(
        [*_sandbox(source, out), python, "/tmp/in/driver.py", "/tmp/in", "/tmp/out", count],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if driver.returncode != 0:
        raise RuntimeError(f"the oracle's driver failed ({driver.returncode}): {driver.stderr}")
    raw = json.loads((out / "results.json").read_text())
    return [
        Outcome(tuple(tuple(call) for call in item["execs"]), tuple(item["changed"]))
        for item in raw
    ]
