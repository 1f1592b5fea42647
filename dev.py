#!/usr/bin/env python3
"""Set up the project's virtual environment and run its jobs.

    python3 dev.py run [PROMPT]    install, then `gosling run -t PROMPT` here (a default prompt)
    python3 dev.py run -- ARGS...  install, then `gosling ARGS...`
    python3 dev.py test            install with dev extras, then ruff, mypy --strict and pytest
    python3 dev.py bench [ARGS...] install, then run the benchmark suite

Only the standard library is used here, so a fresh machine needs nothing but Python >= 3.11.
The environment lives in .venv and is reinstalled only when pyproject.toml changes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
DEFAULT_PROMPT = (
    "Give a short overview of the project in the current directory: what it does, how it is "
    "laid out, and how to run its tests. Look at the files before answering."
)


def _ensure_env(extras: str) -> None:
    if not PY.exists():
        print("creating .venv ...", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()
    stamp = VENV / f".installed-{extras or 'base'}"
    if stamp.exists() and stamp.read_text() == digest:
        return
    target = f".[{extras}]" if extras else "."
    print(f"installing {target} into .venv ...", file=sys.stderr)
    pip = [str(PY), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "install", "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "install", "-e", target], check=True, cwd=ROOT)
    stamp.write_text(digest)


def _run(cmd: list[str]) -> int:
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, cwd=ROOT).returncode


def test() -> int:
    _ensure_env("dev")
    steps = [
        [str(PY), "-m", "ruff", "check", "."],
        [str(PY), "-m", "ruff", "format", "--check", "."],
        [str(PY), "-m", "mypy"],
        [str(PY), "-m", "pytest", "-q"],
    ]
    for step in steps:
        code = _run(step)
        if code != 0:
            return code
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"run", "test", "bench"}:
        print(__doc__, file=sys.stderr)
        return 2
    job, rest = argv[0], argv[1:]
    if job == "test":
        return test()
    if job == "bench":
        _ensure_env("dev")
        return _run([str(PY), "-m", "bench", *rest])
    _ensure_env("")
    if rest[:1] == ["--"]:
        return _run([str(BIN / "gosling"), *rest[1:]])
    prompt = " ".join(rest) or DEFAULT_PROMPT
    return _run([str(BIN / "gosling"), "run", "-t", prompt])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
