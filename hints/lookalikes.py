"""Hint files written for other agents (CLAUDE.md, GEMINI.md, .cursorrules, ...) that gosling
does not load unless told to. `gosling hints` names the ones it passed over, so a project's
instructions are never ignored without a word."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gosling.hints.gitignore import directories_between, find_git_root

OTHER_AGENTS_HINT_FILES = (
    "CLAUDE.md",
    "CLAUDE.local.md",
    "GEMINI.md",
    ".cursorrules",
    ".windsurfrules",
    ".clinerules",
    "CONVENTIONS.md",
    ".github/copilot-instructions.md",
)


def skipped_hint_files(working_dir: Path, filenames: Sequence[str]) -> list[Path]:
    """Files named like another agent's hints, from the git root down to `working_dir`,
    that the configured `filenames` do not load."""
    wd = working_dir.resolve()
    root = find_git_root(wd)
    directories = directories_between(root, wd) if root else [wd]
    loaded = set(filenames)
    return [
        directory / name
        for directory in directories
        for name in OTHER_AGENTS_HINT_FILES
        if name not in loaded and (directory / name).is_file()
    ]
