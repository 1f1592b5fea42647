"""Runs inside the oracle's bubblewrap sandbox: every line under strace, in parallel.

`python sandbox_driver.py IN OUT WORKERS`: IN holds `lines.json` and `template/`; each line
runs as `bash -c LINE` in its own copy of the template under a tmpfs, traced with `strace -f
-e trace=execve,execveat`, with a 5 s limit; OUT gets `results.json`: per line the successful
execve calls (path and argv) and the files created, removed or changed outside `.git/`.
Standard library only: it runs with whatever python the host has.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

_EXEC = re.compile(r'^(\d+)\s+(?:execve|execveat)\((?:\w+, )?"((?:[^"\\]|\\.)*)", \[(.*?)\]')
_RESUMED = re.compile(r"^(\d+)\s+<\.\.\. (?:execve|execveat) resumed>.*= 0$")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _unescape(text: str) -> str:
    return text.encode("latin-1", "backslashreplace").decode("unicode_escape", "replace")


def parse_trace(text: str) -> list[list[str]]:
    """[path, argv0, argv1, ...] of every execve that succeeded."""
    done: list[list[str]] = []
    pending: dict[str, list[str]] = {}
    for line in text.splitlines():
        match = _EXEC.match(line)
        if match:
            call = [_unescape(match.group(2))]
            call += [_unescape(s) for s in _STRING.findall(match.group(3))]
            if line.endswith("= 0"):
                done.append(call)
            elif "<unfinished" in line:
                pending[match.group(1)] = call
            continue
        resumed = _RESUMED.match(line)
        if resumed and resumed.group(1) in pending:
            done.append(pending.pop(resumed.group(1)))
    return done


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    found: dict[str, tuple[int, int]] = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files + dirs:
            path = Path(directory) / name
            try:
                stat = path.lstat()
            except OSError:
                continue
            found[str(path.relative_to(root))] = (stat.st_mtime_ns, stat.st_size)
    return found


def run_one(
    index: int, line: str, template: Path, work: Path, env: dict[str, str]
) -> dict[str, object]:
    scratch = work / str(index)
    shutil.copytree(template, scratch, symlinks=True)
    before = _snapshot(scratch)
    trace = work / f"{index}.trace"
    command = [
        "timeout", "-s", "KILL", "5", "strace", "-f", "-qq", "-e", "trace=execve,execveat",
        "-e", "signal=none", "-s", "512", "-o", str(trace), "bash", "-c", line,
    ]  # fmt: skip
    subprocess.run(
        command,
        cwd=scratch,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    after = _snapshot(scratch)
    changed = sorted(
        {k for k in before.keys() ^ after.keys()}
        | {k for k in before.keys() & after.keys() if before[k] != after[k] and k != "."}
    )
    execs = parse_trace(trace.read_text(errors="replace")) if trace.exists() else []
    shutil.rmtree(scratch, ignore_errors=True)
    return {"execs": execs[1:], "changed": changed}


def main() -> None:
    source, out, workers = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    lines = json.loads((source / "lines.json").read_text())
    env = json.loads((source / "env.json").read_text())
    work = Path("/tmp/work")
    work.mkdir()
    for name in ("home", "tmp"):
        (work / name).mkdir()
    template = source / "template"
    with ThreadPoolExecutor(workers) as pool:
        results = list(
            pool.map(lambda item: run_one(item[0], item[1], template, work, env), enumerate(lines))
        )
    (out / "results.json").write_text(json.dumps(results))


if __name__ == "__main__":
    main()
