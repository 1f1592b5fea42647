#!/usr/bin/env python3
"""Set up the project's virtual environment and run its jobs.

    python3 dev.py run [PROMPT]    install, then `gosling run -t PROMPT` here (a default prompt)
    python3 dev.py run -- ARGS...  install, then `gosling ARGS...`
    python3 dev.py test            install with dev extras, then ruff, mypy --strict and pytest
    python3 dev.py bench [ARGS...] install, then run the benchmark suite
    python3 dev.py mutate [--sample N [--seed S]] [AREA...]
                                   install with the mutate extra, then measure how many
                                   mutants each area's tests kill (slow; see bench/mutation.py)
    python3 dev.py install [--link] [--force]
                                   install, then put `gosling` on your PATH (pipx, uv tool,
                                   or with --link or neither a link in your bin dir to .venv),
                                   checked in a new login shell; a `gosling` already in that
                                   bin dir is replaced only if you say so (or with --force)

Only the standard library is used here, so a fresh machine needs nothing but Python >= 3.11.
The environment lives in .venv and is reinstalled only when pyproject.toml changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
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


CLI_EXTRA = "cli"
"""The extra with the command line's own stack (click, rich, prompt_toolkit, mcp, ...)."""


def _ensure_env(extras: str) -> None:
    if not PY.exists():
        print("creating .venv ...", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    digest = _digest(extras)
    stamp = VENV / f".installed-{extras or 'base'}"
    if stamp.exists() and stamp.read_text() == digest:
        return
    dev_stamp = VENV / ".installed-dev"
    if extras in ("", CLI_EXTRA) and dev_stamp.exists() and dev_stamp.read_text() == _digest("dev"):
        return  # the dev install holds everything the command line's does
    target = f".[{extras}]" if extras else "."
    print(f"installing {target} into .venv ...", file=sys.stderr)
    pip = [str(PY), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "install", "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "install", "-e", target], check=True, cwd=ROOT)
    stamp.write_text(digest)


def _digest(extras: str) -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()


def _run(cmd: list[str]) -> int:
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, cwd=ROOT).returncode


TS_CLIENT = ROOT / "tests" / "acp" / "ts_client"


def _ensure_ts_client() -> int:
    """Install the TypeScript ACP client the tests drive gosling with (npm ci from the
    committed lock file), again only when the lock file changes. Without node the test
    that needs it is skipped and says why."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        print("node/npm not found: the TypeScript ACP client test will be skipped", file=sys.stderr)
        return 0
    lock = TS_CLIENT / "package-lock.json"
    stamp = TS_CLIENT / "node_modules" / ".installed"
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return 0
    code = _run([npm, "ci", "--no-audit", "--no-fund", "--prefix", str(TS_CLIENT)])
    if code == 0:
        stamp.write_text(digest)
    return code


TEST_STEPS = (
    ("lint", ["-m", "ruff", "check", "."], "seconds"),
    ("format check", ["-m", "ruff", "format", "--check", "."], "seconds"),
    (
        "type check (mypy --strict)",
        ["-m", "mypy"],
        "under a minute once cached, a few the first time",
    ),
    ("tests (pytest)", ["-m", "pytest", "-q"], "about 20 minutes on 2 cores"),
)
"""What `dev.py test` runs, in order, and how long each step takes when nothing is known yet."""
TIMES = VENV / ".test-step-seconds.json"
"""How long each step took on its last run here: what the next run announces."""


def test() -> int:
    import json
    import time

    _ensure_env("dev")
    code = _ensure_ts_client()
    if code != 0:
        return code
    try:
        last = json.loads(TIMES.read_text())
    except (OSError, ValueError):
        last = {}
    total = len(TEST_STEPS)
    for number, (label, args, guess) in enumerate(TEST_STEPS, start=1):
        took = last.get(label)
        expect = f"last run here took {_duration(took)}" if took is not None else guess
        print(f"[{number}/{total}] {label}: {expect}", file=sys.stderr, flush=True)
        started = time.monotonic()
        code = _run([str(PY), *args])
        elapsed = time.monotonic() - started
        print(
            f"[{number}/{total}] {label}: {'ok' if code == 0 else 'FAILED'} "
            f"in {_duration(elapsed)}",
            file=sys.stderr,
            flush=True,
        )
        if code != 0:
            return code
        last[label] = round(elapsed, 1)
        with contextlib.suppress(OSError):
            TIMES.write_text(json.dumps(last))
    return 0


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


def _login_shell(command: str) -> subprocess.CompletedProcess[str] | None:
    shell = shutil.which("bash") or shutil.which("sh")
    if shell is None:
        return None
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    return subprocess.run([shell, "-lc", command], capture_output=True, text=True, env=env)


def _bin_dir() -> tuple[Path, bool]:
    """Where to link `gosling`, and whether a new login shell has that dir on PATH: the
    user's bin dir (or /usr/local/bin when writable) that new shells search, else
    ~/.local/bin."""
    shell = _login_shell('printf %s "$PATH"')
    login_path = shell.stdout.split(os.pathsep) if shell and shell.returncode == 0 else []
    home = Path.home()
    preferred = [Path(os.environ["XDG_BIN_HOME"])] if os.environ.get("XDG_BIN_HOME") else []
    preferred += [home / ".local" / "bin", home / "bin", Path("/usr/local/bin")]
    for directory in preferred:
        on_path = str(directory) in login_path
        inside_home = directory.is_relative_to(home)
        if on_path and (inside_home or os.access(directory, os.W_OK)):
            return directory, True
    return preferred[0], False


def _found_in_new_shell() -> str | None:
    """Where a new login shell finds `gosling`, or None."""
    probe = _login_shell("command -v gosling && gosling --version")
    if probe is None or probe.returncode != 0:
        return None
    return probe.stdout.splitlines()[0].strip()


def _link_into_bin_dir(force: bool = False) -> int:
    """Link `gosling` into the bin dir. Something else already called `gosling` there (another
    checkout's link, a program) is replaced only when the user says so, or with --force."""
    directory, _ = _bin_dir()
    link = directory / "gosling"
    target = BIN / "gosling"
    if link.is_symlink() and link.resolve() == target.resolve():
        print(f"{link} already links to {target}", file=sys.stderr)
        return 0
    if link.is_symlink() or link.exists():
        what = f"a link to {os.readlink(link)}" if link.is_symlink() else "a file"
        question = f"{link} exists ({what}); replace it with a link to {target}? [y/N] "
        if not force and not _confirm(question):
            print(
                f"left {link} as it was; to replace it run `python3 dev.py install --force`, "
                f"or run this checkout's {target} directly",
                file=sys.stderr,
            )
            return 1
        link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    print(f"linked {link} -> {target}", file=sys.stderr)
    return 0


def _confirm(question: str) -> bool:
    """A yes from the user at a terminal; no terminal is a no."""
    if not sys.stdin.isatty():
        return False
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False


def install(link_only: bool = False, force: bool = False) -> int:
    """Put `gosling` on PATH: pipx or `uv tool` when present (their own environment), else
    (or with --link) a link from the user's bin dir to this checkout's .venv."""
    _ensure_env(CLI_EXTRA)
    if not link_only and shutil.which("pipx"):
        code = _run(["pipx", "install", "--force", "--editable", f"{ROOT}[{CLI_EXTRA}]"])
    elif not link_only and shutil.which("uv"):
        code = _run(["uv", "tool", "install", "--force", "--editable", f"{ROOT}[{CLI_EXTRA}]"])
    else:
        code = _link_into_bin_dir(force)
    if code != 0:
        return code
    where = _found_in_new_shell()
    if where is None:
        directory, _ = _bin_dir()
        print(
            f"gosling is installed but a new shell does not find it: add {directory} to PATH\n"
            f"  (for bash: echo 'export PATH=\"{directory}:$PATH\"' >> ~/.bashrc), "
            "then open a new shell",
            file=sys.stderr,
        )
        return 1
    print(f"gosling is on PATH in new shells: {where}", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"run", "test", "bench", "install", "mutate"}:
        print(__doc__, file=sys.stderr)
        return 2
    job, rest = argv[0], argv[1:]
    if job == "test":
        return test()
    if job == "install":
        unknown = [arg for arg in rest if arg not in ("--link", "--force")]
        if unknown:
            print(f"dev.py install: unknown option {unknown[0]} (--link, --force)", file=sys.stderr)
            return 2
        return install(link_only="--link" in rest, force="--force" in rest)
    if job == "bench":
        _ensure_env("dev")
        return _run([str(PY), "-m", "bench", *rest])
    if job == "mutate":
        _ensure_env("dev,mutate")
        return _run([str(PY), "-m", "bench.mutation", *rest])
    _ensure_env(CLI_EXTRA)
    if rest[:1] == ["--"]:
        return _run([str(BIN / "gosling"), *rest[1:]])
    prompt = " ".join(rest) or DEFAULT_PROMPT
    gosling = str(BIN / "gosling")
    check = subprocess.run([gosling, "config", "provider"], capture_output=True, text=True)
    if check.returncode != 0:
        code = _offline_demo(gosling, check.stderr)
    else:
        code = _run([gosling, "run", "-t", prompt])
    _say_where_gosling_is()
    return code


def _offline_demo(gosling: str, how_to_get_a_model: str) -> int:
    """No provider: show the context pipeline on a bundled recorded session instead."""
    print("No model provider is set up, so here is gosling's context pipeline on a recorded")
    print("session instead.\n", flush=True)
    code = _run([gosling, "context", "demo"])
    print("\n" + how_to_get_a_model.strip(), file=sys.stderr)
    return code


def _say_where_gosling_is() -> None:
    on_path = shutil.which("gosling")
    if on_path:
        print(f"gosling is {on_path}", file=sys.stderr)
    else:
        print(
            f"gosling is {BIN / 'gosling'} (not on PATH; `python3 dev.py install` puts it there)",
            file=sys.stderr,
        )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
