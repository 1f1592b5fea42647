"""Global and project hints for a working directory, as one block of system-prompt text."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from gosling.hints.gitignore import NO_RULES, GitignoreRules, directories_between, find_git_root
from gosling.hints.headers import DEFAULT_HEADERS, HintHeaders
from gosling.hints.imports import ImportScope
from gosling.hints.names import resolve_filenames
from gosling.hints.reader import MAX_HINT_OUTPUT_BYTES, HintFileReader
from gosling.hints.report import HintReport, Scope

SECTION_SEPARATOR = "\n\n"
AGENTS_MD = "AGENTS.md"
AGENTS_HOME_SUBDIR = ".agents"
"""`~/.agents/AGENTS.md` holds global instructions shared by several agent tools."""
PART_SEPARATOR = "\n"


def load_hint_files(
    working_dir: str | os.PathLike[str],
    filenames: Sequence[str] | None = None,
    *,
    global_dir: str | os.PathLike[str] | None = None,
    home_dir: str | os.PathLike[str] | None = None,
    headers: HintHeaders | None = None,
) -> str:
    """The global and project hints for `working_dir`, ready for the system prompt.

    Empty when no hint file exists. See `collect_hints` for what is read and the report.
    """
    return collect_hints(
        working_dir, filenames, global_dir=global_dir, home_dir=home_dir, headers=headers
    ).text


def collect_hints(
    working_dir: str | os.PathLike[str],
    filenames: Sequence[str] | None = None,
    *,
    global_dir: str | os.PathLike[str] | None = None,
    home_dir: str | os.PathLike[str] | None = None,
    budget_bytes: int = MAX_HINT_OUTPUT_BYTES,
    headers: HintHeaders | None = None,
) -> HintReport:
    """Read every hint file for `working_dir` and say what was used, refused and why.

    `filenames` defaults to `DEFAULT_FILENAMES`. Global hints are read only from where the
    caller says: each name in `global_dir`, then `<home_dir>/.agents/AGENTS.md` (the
    cross-tool location) when `AGENTS.md` is one of the names; left as None, neither is read
    (the command line passes gosling's config dir and the user's home). Project hints: each
    name in every directory from the git root down to the working dir (only the working dir
    outside git). Imports stay inside the git root (global hints: inside the hint file's own
    dir) and skip gitignored files. `headers` rewords the headings.
    """
    wd = Path(working_dir).expanduser().resolve()
    if not wd.is_dir():
        raise NotADirectoryError(f"cannot load hints: {wd} is not an existing directory")
    names = resolve_filenames(filenames)
    gdir = None if global_dir is None else Path(global_dir).expanduser()
    headers = headers or DEFAULT_HEADERS
    git_root = find_git_root(wd)
    project_dirs = directories_between(git_root, wd) if git_root else [wd]

    reader = HintFileReader(budget_bytes)
    sections: list[str] = []
    global_files: list[tuple[Path, ImportScope]] = []
    if gdir is not None:
        global_scope = ImportScope(gdir, NO_RULES)
        global_files += [(gdir / name, global_scope) for name in names]
    if AGENTS_MD in names and home_dir is not None:
        agents_dir = Path(home_dir).expanduser() / AGENTS_HOME_SUBDIR
        global_files.append((agents_dir / AGENTS_MD, ImportScope(agents_dir, NO_RULES)))
    project_scope = ImportScope(git_root or wd, GitignoreRules(project_dirs))
    plan: list[tuple[Scope, str, list[tuple[Path, ImportScope]]]] = [
        ("global", headers.global_header() if global_files else "", global_files),
        (
            "project",
            headers.project_header(),
            [(directory / name, project_scope) for directory in project_dirs for name in names],
        ),
    ]
    for kind, header, files in plan:
        parts: list[str] = []
        opening = len(header.encode()) + (len(SECTION_SEPARATOR) if sections else 0)
        for path, scope in files:
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
