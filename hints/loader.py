"""Global and project hints for a working directory, as one block of system-prompt text."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from hints.gitignore import NO_RULES, GitignoreRules, directories_between, find_git_root
from hints.imports import ImportScope
from hints.names import resolve_filenames
from hints.reader import MAX_HINT_OUTPUT_BYTES, HintFileReader
from hints.report import HintReport, Scope

GLOBAL_HEADER = (
    "### Global Hints\n"
    "The user keeps these instructions for gosling; they apply to every project.\n"
)
PROJECT_HEADER = (
    "### Project Hints\n"
    "These instructions come with the project being worked on, read from its root down to "
    "the current directory; deeper files are more specific.\n"
)
SECTION_SEPARATOR = "\n\n"
PART_SEPARATOR = "\n"


def load_hint_files(
    working_dir: str | os.PathLike[str],
    filenames: Sequence[str] | None = None,
    *,
    global_dir: str | os.PathLike[str] | None = None,
) -> str:
    """The global and project hints for `working_dir`, ready for the system prompt.

    Empty when no hint file exists. See `collect_hints` for what is read and the report.
    """
    return collect_hints(working_dir, filenames, global_dir=global_dir).text


def collect_hints(
    working_dir: str | os.PathLike[str],
    filenames: Sequence[str] | None = None,
    *,
    global_dir: str | os.PathLike[str] | None = None,
    budget_bytes: int = MAX_HINT_OUTPUT_BYTES,
) -> HintReport:
    """Read every hint file for `working_dir` and say what was used, refused and why.

    Global hints: each configured name in `global_dir` (default: gosling's config dir).
    Project hints: each configured name in every directory from the git root down to the
    working dir (only the working dir outside git). Imports stay inside the git root (global
    hints: inside the global dir) and skip gitignored files.
    """
    wd = Path(working_dir).expanduser().resolve()
    if not wd.is_dir():
        raise NotADirectoryError(f"cannot load hints: {wd} is not an existing directory")
    names = resolve_filenames(filenames)
    gdir = _default_global_dir() if global_dir is None else Path(global_dir).expanduser()
    git_root = find_git_root(wd)
    project_dirs = directories_between(git_root, wd) if git_root else [wd]

    reader = HintFileReader(budget_bytes)
    sections: list[str] = []
    global_scope = ImportScope(gdir, NO_RULES)
    project_scope = ImportScope(git_root or wd, GitignoreRules(project_dirs))
    plan: list[tuple[Scope, str, ImportScope, list[Path]]] = [
        ("global", GLOBAL_HEADER, global_scope, [gdir / name for name in names]),
        (
            "project",
            PROJECT_HEADER,
            project_scope,
            [directory / name for directory in project_dirs for name in names],
        ),
    ]
    for kind, header, scope, paths in plan:
        parts: list[str] = []
        opening = len(header.encode()) + (len(SECTION_SEPARATOR) if sections else 0)
        for path in paths:
            framing = len(PART_SEPARATOR) if parts else opening
            content = reader.read(path, scope, kind, framing, confine=kind == "project")
            if content is not None:
                parts.append(content)
        if parts:
            sections.append(header + PART_SEPARATOR.join(parts))
    return HintReport(
        working_dir=wd,
        git_root=git_root,
        filenames=names,
        global_dir=gdir,
        text=SECTION_SEPARATOR.join(sections),
        loaded=tuple(reader.loaded),
        refused=tuple(reader.refused),
        budget_bytes=budget_bytes,
    )


def _default_global_dir() -> Path:
    from prompts.locations import user_dirs

    return user_dirs().config
