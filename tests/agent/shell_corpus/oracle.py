"""A bash oracle: what a command line really runs and changes, found by running it.

Each command runs with real bash (`bash -c`, as the shell tool runs it) in its own scratch
directory, with PATH starting at a directory of shims that append their argv to a log and
then run the real program (git's shim only logs). What ran is read from the log; what changed
is found by comparing the scratch directory before and after, which also catches programs run
by absolute path (`/bin/rm x`) that bypass the shims. Commands run in batches: each of a few driver
bash processes runs its share one after another, each under `timeout`, with stdin from /dev/null,
HOME and TMPDIR inside the scratch root. Nothing outside the scratch root is named.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

SHIMMED = ("ls", "cat", "rm", "touch", "echo", "git", "grep", "head", "wc", "mkdir")
TEMPLATE = {"a": "alpha\n", "b": "beta\n", "x": "x\n", "y": "y\n", "sub/f": "f\n"}
RECORD, FIELD = "\x1e", "\x1f"
SHIM = """#!/bin/sh
record=$(printf '%s' "{name}"; for arg in "$@"; do printf '\\037%s' "$arg"; done; printf '\\036')
printf '%s' "$record" >> "${{ORACLE_LOG:-/dev/null}}" 2>/dev/null
{run}
"""
"""Each shim appends its record in ONE write: programs of a pipeline run at the same time, and
records written piece by piece interleaved ("catls"), which read as an unknown program."""
DRIVER = """
root="$1"; first="$2"; end="$3"
for ((i = first; i < end; i++)); do
  cd "$root/$i" || continue
  ORACLE_LOG="$root/$i.log" timeout -s KILL 5 bash -c "$(< "$root/$i.cmd")" \\
    </dev/null 2>&1
done
"""


@dataclass(frozen=True)
class Outcome:
    """What one command line did when bash ran it."""

    ran: tuple[tuple[str, ...], ...]
    """argv of every shimmed program that ran (absolute-path runs show only in `changed`)."""
    created: frozenset[str]
    removed: frozenset[str]
    modified: frozenset[str]

    @property
    def changed(self) -> bool:
        return bool(self.created or self.removed or self.modified)

    def programs(self) -> set[str]:
        return {argv[0] for argv in self.ran}

    def deleted(self) -> bool:
        """rm ran or a file vanished: what a deny rule on `rm` is meant to stop."""
        return "rm" in self.programs() or bool(self.removed)


def make_shims(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    real_path = "/usr/bin:/bin"
    for name in SHIMMED:
        real = shutil.which(name, path=real_path)
        run = "exit 0" if name == "git" or real is None else f'exec {real} "$@"'
        shim = directory / name
        shim.write_text(SHIM.format(name=name, run=run))
        shim.chmod(0o755)
    return directory


def run_batch(
    commands: list[str], root: Path, *, workers: int = 4, timeout: float = 600
) -> list[Outcome]:
    """Run every command in its own scratch dir under `root`; outcomes in the same order."""
    shims = make_shims(root / "shims")
    (root / "home").mkdir(exist_ok=True)
    (root / "tmp").mkdir(exist_ok=True)
    before: list[dict[str, tuple[int, bytes]]] = []
    for index, command in enumerate(commands):
        scratch = root / str(index)
        for relative, text in TEMPLATE.items():
            path = scratch / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        (root / f"{index}.cmd").write_text(command)
        before.append(_snapshot(scratch))
    env = {
        "PATH": f"{shims}:/usr/bin:/bin",
        "HOME": str(root / "home"),
        "TMPDIR": str(root / "tmp"),
        "LANG": "C",
    }
    driver = root / "driver.sh"
    driver.write_text(DRIVER)
    step = -(-len(commands) // workers)
    # Output goes through pipes, which stay open until background jobs (`rm x &`) finish.
    drivers = [
        subprocess.Popen(
            ["bash", str(driver), str(root), str(first), str(min(first + step, len(commands)))],
            env=env,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for first in range(0, len(commands), step)
    ]
    for process in drivers:
        process.communicate(timeout=timeout)
    return [
        _outcome(root / f"{index}.log", before[index], _snapshot(root / str(index)))
        for index in range(len(commands))
    ]


def _snapshot(scratch: Path) -> dict[str, tuple[int, bytes]]:
    found: dict[str, tuple[int, bytes]] = {}
    for directory, dirs, files in os.walk(scratch):
        for name in [*dirs, *files]:
            path = Path(directory) / name
            relative = path.relative_to(scratch).as_posix()
            try:
                stat = path.lstat()
                content = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
            except OSError:
                continue
            found[relative + ("/" if name in dirs else "")] = (stat.st_mtime_ns, content)
    return found


def _outcome(
    log: Path, before: dict[str, tuple[int, bytes]], after: dict[str, tuple[int, bytes]]
) -> Outcome:
    raw = log.read_text(errors="replace") if log.exists() else ""
    ran = tuple(tuple(record.split(FIELD)) for record in raw.split(RECORD) if record)
    return Outcome(
        ran=ran,
        created=frozenset(after.keys() - before.keys()),
        removed=frozenset(before.keys() - after.keys()),
        modified=frozenset(
            k for k in before.keys() & after.keys() if before[k] != after[k] and not k.endswith("/")
        ),
    )
