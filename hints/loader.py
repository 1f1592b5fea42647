"""Global and project hints for a working directory, as one block of system-prompt text."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from gosling.hints.gitignore import NO_RULES, GitignoreRules, directories_between, find_git_root
from gosling.hints.imports import ImportScope
from gosling.hints.names import resolve_filenames
from gosling.hints.reader import MAX_HINT_OUTPUT_BYTES, HintFileReader
from gosling.hints.report import HintReport, Scope

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
) -> str:
    """The global and project hints for `working_dir`, ready for the system prompt.

    Empty when no hint file exists. See `collect_hints` for what is read and the report.
    """
    return collect_hints(working_dir, filenames, global_dir=global_dir, home_dir=home_dir).text


def collect_hints(
    working_dir: str | os.PathLike[str],
    filenames: Sequence[str] | None = None,
    *,
    global_dir: str | os.PathLike[str] | None = None,
    home_dir: str | os.PathLike[str] | None = None,
    budget_bytes: int = MAX_HINT_OUTPUT_BYTES,
) -> HintReport:
    """Read every hint file for `working_dir` and say what was used, refused and why.

    Global hints: each configured name in `global_dir` (default: gosling's config dir), then
    `~/.agents/AGENTS.md` (the cross-tool location) when `AGENTS.md` is a configured name;
    `home_dir` replaces `~` (default: `$GOSLING_HOME` when set, else the user's home).
    Project hints: each configured name in every directory from the git root down to the
    working dir (only the working dir outside git). Imports stay inside the git root (global
    hints: inside the hint file's own dir) and skip gitignored files.
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
    global_files = [(gdir / name, global_scope) for name in names]
    if AGENTS_MD in names:
        agents_dir = _default_home_dir() if home_dir is None else Path(home_dir).expanduser()
        agents_dir = agents_dir / AGENTS_HOME_SUBDIR
        global_files.append((agents_dir / AGENTS_MD, ImportScope(agents_dir, NO_RULES)))
    project_scope = ImportScope(git_root or wd, GitignoreRules(project_dirs))
    plan: list[tuple[Scope, str, list[tuple[Path, ImportScope]]]] = [
        ("global", GLOBAL_HEADER, global_files),
        (
            "project",
            PROJECT_HEADER,
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


def _default_home_dir() -> Path:
    """Where `~/.agents/` is looked for: `$GOSLING_HOME` when set (so a relocated gosling,
    and every test, never reads the real home), else the user's home."""
    relocated = os.environ.get("GOSLING_HOME")
    return Path(relocated).expanduser() if relocated else Path.home()


def _default_global_dir() -> Path:
    from gosling.prompts.locations import user_dirs

    return user_dirs().config
