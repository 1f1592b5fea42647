"""The repository's own files that a trusted project file runs by path.

A trusted `.mcp.json` saying `python scripts/server.py`, or a hook `./hooks/check.sh`, runs
whatever that file holds after the next `git checkout`: trusting the command means trusting
the file. `scripts_run_by_path` finds them, so they are hashed with the trust
(`agent.trust.project_files`) and a change to one makes the folder untrusted again.

Looked at: the command and arguments of each stdio server (`.mcp.json`'s `mcpServers`, the
project config's `[[extensions]]`) and the words of each hook command (the project config's
`hooks`, `.claude/settings.json`'s `hooks`), with `$CLAUDE_PROJECT_DIR` standing for the
project. A word counts when it names an existing file inside the project, as a path
(`scripts/x.py`, `./run`, `/abs/inside/project/x`) or a file name with a script suffix
(`server.py`), and a module run with `-m` (`python -m pkg.server`: `pkg/server.py` or
`pkg/server/__main__.py` and the `__init__.py` of each package on the way, at the project
root or under `src/`). Not found: a file a script imports or reads, a path built at run time;
those change unseen.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

SCRIPT_SUFFIXES = (".py", ".sh", ".bash", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".ps1")
_PROJECT_VARIABLE = re.compile(r"\$\{?CLAUDE_PROJECT_DIR\}?")


def scripts_run_by_path(root: Path, gated: Iterable[Path]) -> list[Path]:
    """The files inside `root` that the commands of the `gated` project files run."""
    real_root = Path(os.path.realpath(root))
    found: dict[Path, None] = {}
    for path in gated:
        module_next = False
        for word in _command_words(path):
            targets = _module_files(word, root, real_root) if module_next else []
            module_next = word == "-m"
            target = _project_file(word, root, real_root)
            for found_path in [*targets, *([target] if target is not None else [])]:
                found.setdefault(found_path)
    return list(found)


_MODULE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _module_files(word: str, root: Path, real_root: Path) -> list[Path]:
    """The project files `python -m word` runs: the module (or package `__main__`) and the
    `__init__.py` of every package it sits in, from the root or a `src/` layout."""
    if not _MODULE.fullmatch(word):
        return []
    parts = word.split(".")
    for base in ("", "src"):
        files = [
            *(f"{base}/{'/'.join(parts[:n])}/__init__.py" for n in range(1, len(parts) + 1)),
            f"{base}/{'/'.join(parts)}.py",
            f"{base}/{'/'.join(parts)}/__main__.py",
        ]
        found = [t for f in files if (t := _project_file(f.lstrip("/"), root, real_root))]
        if found:
            return found
    return []


def _command_words(path: Path) -> Iterator[str]:
    data = _read(path)
    if not isinstance(data, dict):
        return
    servers = data.get("mcpServers")
    if isinstance(servers, dict):
        yield from _server_words(servers.values())
    extensions = data.get("extensions")
    if isinstance(extensions, list):
        yield from _server_words(extensions)
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        for groups in hooks.values():
            for group in groups if isinstance(groups, list) else ():
                entries = group.get("hooks") if isinstance(group, dict) else None
                for entry in entries if isinstance(entries, list) else ():
                    command = entry.get("command") if isinstance(entry, dict) else None
                    if isinstance(command, str):
                        yield from _shell_words(command)


def _server_words(servers: Iterable[Any]) -> Iterator[str]:
    for server in servers:
        if not isinstance(server, dict):
            continue
        if isinstance(server.get("command"), str):
            yield from _shell_words(server["command"])
        args = server.get("args")
        for arg in args if isinstance(args, list) else ():
            if isinstance(arg, str):
                yield arg


def _shell_words(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=True)
    except ValueError:
        return command.split()


def _project_file(word: str, root: Path, real_root: Path) -> Path | None:
    word = _PROJECT_VARIABLE.sub(lambda _: str(root), word.strip())
    if not word or word.startswith("-") or "$" in word:
        return None
    if "/" not in word and not word.endswith(SCRIPT_SUFFIXES):
        return None
    candidate = Path(word) if os.path.isabs(word) else root / word
    real = Path(os.path.realpath(candidate))
    if not real.is_relative_to(real_root) or not real.is_file():
        return None
    return root / real.relative_to(real_root)


def _read(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
        return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
