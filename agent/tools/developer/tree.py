"""The `tree` tool: a directory listing with line counts that respects .gitignore files.

Every `.gitignore` met on the way down applies to its own directory and below, as in git.
`.git` itself is always skipped. Depth and entry caps keep the answer small; the model can
call `tree` again on a subdirectory.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import pathspec

from gosling.agent.tools.base import Tool, ToolContext, ToolError, tool
from gosling.agent.tools.developer.safe_io import kind_of, read_plain_file
from gosling.agent.tools.developer.workspace import (
    BINARY_SNIFF_BYTES,
    DeveloperState,
    display_path,
    looks_binary,
)

COUNT_LINES_UP_TO_BYTES = 2_000_000
ALWAYS_SKIPPED = frozenset({".git"})
GITIGNORE_MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class _Ignore:
    base: Path
    spec: pathspec.GitIgnoreSpec

    def matches(self, path: Path, is_dir: bool) -> bool:
        relative = path.relative_to(self.base).as_posix()
        return self.spec.match_file(f"{relative}/" if is_dir else relative)


def _load_ignore(directory: Path) -> _Ignore | None:
    data = read_plain_file(directory / ".gitignore", GITIGNORE_MAX_BYTES)
    if data is None:
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    return _Ignore(directory, pathspec.GitIgnoreSpec.from_lines(lines))


def _ignores_above(start: Path, root: Path) -> list[_Ignore]:
    """The .gitignore files between the working dir and `start` (exclusive) apply too."""
    found: list[_Ignore] = []
    if not start.is_relative_to(root):
        return found
    current = root
    for part in start.relative_to(root).parts:
        loaded = _load_ignore(current)
        if loaded is not None:
            found.append(loaded)
        current = current / part
    return found


def _describe_file(entry: os.DirEntry[str]) -> str:
    try:
        status = entry.stat(follow_symlinks=False)
    except OSError:
        return ""
    if not stat.S_ISREG(status.st_mode):
        return f" ({kind_of(status.st_mode)})"
    size = status.st_size
    if size > COUNT_LINES_UP_TO_BYTES:
        return f" ({size:,} bytes)"
    data = read_plain_file(entry.path, COUNT_LINES_UP_TO_BYTES + 1)
    if data is None:
        return ""
    if looks_binary(data[:BINARY_SNIFF_BYTES]):
        return f" (binary, {size:,} bytes)"
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return f" ({lines} lines)"


def _has_entries(directory: Path) -> bool:
    try:
        with os.scandir(directory) as entries:
            return any(True for _ in entries)
    except OSError:
        return False


def render_tree(start: Path, root: Path, *, max_depth: int, max_entries: int) -> str:
    """The listing of `start`, indented two spaces per level, directories ending in `/`."""
    out: list[str] = []
    skipped = 0

    def walk(directory: Path, depth: int, ignores: list[_Ignore]) -> None:
        nonlocal skipped
        own = _load_ignore(directory)
        active = [*ignores, own] if own else ignores
        try:
            entries = sorted(os.scandir(directory), key=lambda e: (not e.is_dir(), e.name.lower()))
        except OSError as exc:
            out.append(f"{'  ' * depth}[cannot list: {exc.strerror}]")
            return
        for entry in entries:
            path = Path(entry.path)
            is_dir = entry.is_dir(follow_symlinks=False)
            if entry.name in ALWAYS_SKIPPED or any(i.matches(path, is_dir) for i in active):
                continue
            if len(out) >= max_entries:
                skipped += 1
                continue
            indent = "  " * depth
            if is_dir:
                out.append(f"{indent}{entry.name}/")
                if depth + 1 < max_depth:
                    walk(path, depth + 1, active)
                elif _has_entries(path):
                    out.append(f"{indent}  …")
            elif entry.is_symlink():
                out.append(f"{indent}{entry.name} -> {os.readlink(path)}")
            else:
                out.append(f"{indent}{entry.name}{_describe_file(entry)}")

    walk(start, 0, _ignores_above(start, root))
    if skipped:
        out.append(f"[{skipped} more entries not shown; call tree on a subdirectory]")
    return "\n".join(out) if out else "(empty directory)"


def tree_tool(state: DeveloperState) -> Tool:
    settings = state.settings

    @tool(read_only=True)
    async def tree(ctx: ToolContext, path: str = ".", depth: int | None = None) -> str:
        """List a directory as a tree with line counts, skipping what .gitignore ignores.

        Args:
            path: The directory, relative to the working directory (default: the working directory).
            depth: How many levels to show (default 3).
        """
        levels = settings.tree_max_depth if depth is None else max(1, min(depth, 10))

        def work() -> str:
            target = state.resolve(path, ctx.working_dir)
            shown = display_path(target, ctx.working_dir)
            if not target.is_dir():
                raise ToolError(
                    f"{shown} is not a directory"
                    + (" (use view for files)." if target.exists() else ".")
                )
            listing = render_tree(
                target,
                ctx.working_dir.resolve(),
                max_depth=levels,
                max_entries=settings.tree_max_entries,
            )
            return f"{shown}/\n{listing}" if shown != "." else listing

        return await state.off_loop("tree", work)

    return tree
