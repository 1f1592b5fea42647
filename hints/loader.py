"""Global and project hints for a working directory, as one block of system-prompt text."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

from gosling.hints.gitignore import NO_RULES, GitignoreRules, directories_between, find_git_root
from gosling.hints.headers import DEFAULT_HEADERS, HintHeaders
from gosling.hints.imports import ImportScope
from gosling.hints.names import resolve_filenames
from gosling.hints.reader import MAX_HINT_OUTPUT_BYTES, HintFileReader
from gosling.hints.report import HintReport, Refusal, RefusalReason, Scope

logger = logging.getLogger(__name__)

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
    global_filenames: Sequence[str] | None = None,
    import_budget_bytes: int | None = None,
) -> str:
    """The global and project hints for `working_dir`, ready for the system prompt.

    Empty when no hint file exists. See `collect_hints` for what is read and the report.
    """
    return collect_hints(
        working_dir,
        filenames,
        global_dir=global_dir,
        home_dir=home_dir,
        headers=headers,
        global_filenames=global_filenames,
        import_budget_bytes=import_budget_bytes,
    ).text


def collect_hints(
    working_dir: str | os.PathLike[str],
    filenames: Sequence[str] | None = None,
    *,
    global_dir: str | os.PathLike[str] | None = None,
    home_dir: str | os.PathLike[str] | None = None,
    budget_bytes: int = MAX_HINT_OUTPUT_BYTES,
    headers: HintHeaders | None = None,
    global_filenames: Sequence[str] | None = None,
    import_budget_bytes: int | None = None,
) -> HintReport:
    """Read every hint file for `working_dir` and say what was used, refused and why.

    `filenames` defaults to `DEFAULT_FILENAMES`. Global hints are read only from where the
    caller says: each name in `global_dir`, then `<home_dir>/.agents/AGENTS.md` (the
    cross-tool location) when `AGENTS.md` is one of the names; left as None, neither is read
    (the command line passes gosling's config dir and the user's home). Project hints: each
    name in every directory from the git root down to the working dir (only the working dir
    outside git). Imports stay inside the git root (global hints: inside the hint file's own
    dir) and skip gitignored files. `headers` rewords the headings.

    `global_filenames` are the names looked up in `global_dir` and `~/.agents` (default: the
    same as `filenames`): names a project chose are for the project's own files, never the
    user's config dir. `import_budget_bytes` caps what `@file` imports add over all hint
    files together (the agent gives a share of the model's window); the imports left out
    are named in one warning.
    """
    wd = Path(working_dir).expanduser().resolve()
    if not wd.is_dir():
        raise NotADirectoryError(f"cannot load hints: {wd} is not an existing directory")
    names = resolve_filenames(filenames)
    global_names = names if global_filenames is None else resolve_filenames(global_filenames)
    gdir = None if global_dir is None else Path(global_dir).expanduser()
    headers = headers or DEFAULT_HEADERS
    git_root = find_git_root(wd)
    project_dirs = directories_between(git_root, wd) if git_root else [wd]

    reader = HintFileReader(budget_bytes, import_budget_bytes)
    sections: list[str] = []
    global_files: list[tuple[Path, ImportScope]] = []
    if gdir is not None:
        global_scope = ImportScope(gdir, NO_RULES)
        global_files += [(gdir / name, global_scope) for name in global_names]
    if AGENTS_MD in global_names and home_dir is not None:
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
    _warn_left_out(reader.refused, import_budget_bytes)
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


def _warn_left_out(refused: Sequence[Refusal], import_budget_bytes: int | None) -> None:
    """One warning naming every import left out because the imports' budget was spent."""
    left_out = [r for r in refused if r.reason is RefusalReason.IMPORT_BUDGET and r.ref]
    if not left_out:
        return
    budget = f" ({import_budget_bytes:,} bytes)" if import_budget_bytes is not None else ""
    logger.warning(
        "%d hint imports over their budget%s left out (the model sees them as written): %s",
        len(left_out),
        budget,
        ", ".join(f"@{r.ref}" for r in left_out),
    )
