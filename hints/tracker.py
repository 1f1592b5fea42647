"""Hints of subdirectories the agent works in, discovered from its tool calls.

Top-level hints cover the git root down to the working dir. When a tool touches
`packages/api/src/x.py`, the hint files of `packages`, `packages/api` and
`packages/api/src` become relevant too; the tracker finds them and hands each one over once.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from gosling.hints.gitignore import GitignoreRules, directories_between, find_git_root
from gosling.hints.headers import DEFAULT_HEADERS, HintHeaders
from gosling.hints.imports import ImportScope
from gosling.hints.names import resolve_filenames
from gosling.hints.reader import MAX_HINT_OUTPUT_BYTES, HintFileReader
from gosling.hints.report import LoadedHint, Refusal

if TYPE_CHECKING:
    from gosling.hints.gitignore import SpecCache

PATH_KEYS = ("path", "file_path", "file")
"""Tool arguments naming a file or a directory. The parent directory is touched and, when the
value is an existing directory, that directory itself too (`tree path=src` loads `src`'s
hints; goose touches only the parent, here the working dir)."""
DIRECTORY_KEYS = ("cwd", "workdir")
"""Tool arguments naming a directory that is itself touched."""
COMMAND_KEY = "command"
KEY_PREFIX = "subdir_hints:"
MAX_PENDING = 256
"""Directories waiting to exist; the oldest are forgotten beyond this."""


class HasArguments(Protocol):
    """Anything shaped like `conversation.ToolRequest`."""

    @property
    def arguments(self) -> Mapping[str, Any] | None: ...


def resolve_to_parent_dir(token: str, working_dir: str | os.PathLike[str]) -> Path | None:
    """The directory a path-like token points into: the parent of `working_dir / token`.

    `src/main.py` -> `<wd>/src`; `/tmp/x.py` -> `/tmp`; `src` -> `<wd>`. None for an
    empty token.
    """
    token = token.strip()
    if not token or "\0" in token:
        return None
    return (Path(working_dir) / token).parent


class SubdirectoryHintTracker:
    """Collects directories touched by tool calls; loads their hint files once each."""

    def __init__(
        self,
        filenames: Sequence[str] | None = None,
        *,
        budget_bytes: int = MAX_HINT_OUTPUT_BYTES,
        headers: HintHeaders | None = None,
        import_budget_bytes: int | None = None,
    ) -> None:
        """`filenames` defaults to `DEFAULT_FILENAMES`; `headers` rewords the heading;
        `import_budget_bytes` caps what `@file` imports add over all subdirectory hints."""
        resolve_filenames(filenames)
        self._filenames = filenames
        self._headers = headers or DEFAULT_HEADERS
        self._pending: dict[Path, None] = {}
        self._reader = HintFileReader(budget_bytes, import_budget_bytes)
        self._gitignore_cache: SpecCache = {}

    @classmethod
    def from_tool_requests(
        cls,
        requests: Iterable[HasArguments],
        working_dir: str | os.PathLike[str],
        filenames: Sequence[str] | None = None,
        *,
        budget_bytes: int = MAX_HINT_OUTPUT_BYTES,
        headers: HintHeaders | None = None,
        import_budget_bytes: int | None = None,
    ) -> SubdirectoryHintTracker:
        """A tracker for a resumed session: the hint files reachable from the directories its
        earlier tool calls touched count as already delivered, so they are not sent again."""
        tracker = cls(
            filenames,
            budget_bytes=budget_bytes,
            headers=headers,
            import_budget_bytes=import_budget_bytes,
        )
        for request in requests:
            tracker.record_tool_arguments(request.arguments, working_dir)
        tracker._visit(working_dir, restoring=True)
        return tracker

    @property
    def loaded(self) -> tuple[LoadedHint, ...]:
        return tuple(self._reader.loaded)

    @property
    def refused(self) -> tuple[Refusal, ...]:
        return tuple(self._reader.refused)

    def record_tool_arguments(
        self, arguments: Mapping[str, Any] | None, working_dir: str | os.PathLike[str]
    ) -> None:
        """Note the directories a tool call is about to touch (call before running it)."""
        if not arguments:
            return
        wd = Path(os.path.abspath(working_dir))
        for key in PATH_KEYS:
            value = arguments.get(key)
            if isinstance(value, str):
                self._record_token(value, wd)
        for key in DIRECTORY_KEYS:
            value = arguments.get(key)
            if isinstance(value, str) and value.strip() and "\0" not in value:
                self._add(wd / value.strip())
        command = arguments.get(COMMAND_KEY)
        if isinstance(command, str):
            for token in path_tokens(command):
                self._record_token(token, wd)

    def load_new_hints(self, working_dir: str | os.PathLike[str]) -> list[tuple[str, str]]:
        """`(key, content)` for each directory with hint files not handed out before.

        Only directories strictly inside the working dir count (symlinks resolved), with
        every directory between it and the touched one, top-down, in first-touched order.
        A directory that does not exist yet is tried again on the next call; the directories
        above it that exist are loaded now.
        """
        return self._visit(working_dir, restoring=False)

    def hints_in_play(
        self, directories: Iterable[Path], working_dir: str | os.PathLike[str]
    ) -> list[tuple[str, str]]:
        """`(key, content)` again, read from disk now, for each directory between the working
        dir and one of `directories` whose hint files this tracker handed out before: what a
        compaction sends back for the directories still in play. The same rules as the first
        load (inside the working dir, not ignored, confined), under a budget of its own."""
        try:
            wd = Path(working_dir).resolve(strict=True)
        except OSError:
            return []
        handed_out = {
            Path(os.path.realpath(hint.path)).parent
            for hint in self._reader.loaded
            if hint.scope == "subdirectory"
        }
        if not handed_out:
            return []
        names = resolve_filenames(self._filenames)
        boundary = find_git_root(wd) or wd
        ignore = GitignoreRules([boundary], self._gitignore_cache)
        steps: dict[Path, None] = {}
        for directory in directories:
            real = Path(os.path.realpath(wd / directory))
            real = real if real.is_dir() else _deepest_existing(real)
            if real == wd or not real.is_relative_to(wd):
                continue
            for step in directories_between(wd, real)[1:]:
                if step in handed_out and not ignore.is_ignored(step, is_dir=True):
                    steps.setdefault(step, None)
        again = HintFileReader(self._reader.budget_bytes, self._reader.import_budget_bytes)
        loaded = [self._load_directory(step, names, boundary, ignore, again) for step in steps]
        return [entry for entry in loaded if entry is not None]

    def _record_token(self, token: str, wd: Path) -> None:
        parent = resolve_to_parent_dir(token, wd)
        if parent is None:
            return
        self._add(parent)
        full = wd / token.strip()
        if full.is_dir():
            self._add(full)

    def _add(self, directory: Path) -> None:
        self._pending.setdefault(directory, None)
        while len(self._pending) > MAX_PENDING:
            del self._pending[next(iter(self._pending))]

    def _visit(
        self, working_dir: str | os.PathLike[str], *, restoring: bool
    ) -> list[tuple[str, str]]:
        try:
            wd = Path(working_dir).resolve(strict=True)
        except OSError:
            return []
        names = resolve_filenames(self._filenames)
        boundary = find_git_root(wd) or wd
        ignore = GitignoreRules([boundary], self._gitignore_cache)
        entries: list[tuple[str, str]] = []
        for directory in list(self._pending):
            real = Path(os.path.realpath(directory))
            if real == wd or not real.is_relative_to(wd) or ".git" in real.relative_to(wd).parts:
                del self._pending[directory]
                continue
            if real.is_dir():
                del self._pending[directory]
            elif real.exists():
                del self._pending[directory]
                continue
            else:
                real = _deepest_existing(real)
            for step in directories_between(wd, real)[1:]:
                if ignore.is_ignored(step, is_dir=True):
                    break  # node_modules/evilpkg/AGENTS.md is no hint of this project
                if restoring:
                    for name in names:
                        if (step / name).is_file():
                            self._reader.mark_seen(step / name)
                    continue
                entry = self._load_directory(step, names, boundary, ignore)
                if entry is not None:
                    entries.append(entry)
        return entries

    def _load_directory(
        self,
        directory: Path,
        names: tuple[str, ...],
        boundary: Path,
        ignore: GitignoreRules,
        reader: HintFileReader | None = None,
    ) -> tuple[str, str] | None:
        reader = reader or self._reader
        header = self._headers.subdirectory_header(directory)
        scope = ImportScope(boundary, ignore)
        parts: list[str] = []
        for name in names:
            if ignore.is_ignored(directory / name):
                continue
            framing = 1 if parts else len(header.encode())
            content = reader.read(directory / name, scope, "subdirectory", framing, confine=True)
            if content is not None:
                parts.append(content)
        if not parts:
            return None
        return f"{KEY_PREFIX}{directory}", header + "\n".join(parts)


def path_tokens(command: str) -> list[str]:
    """Words of a shell command that look like paths: not flags, containing `/` or `.`."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    return [w for w in words if not w.startswith("-") and ("/" in w or "." in w)]


def _deepest_existing(path: Path) -> Path:
    return next((parent for parent in path.parents if parent.is_dir()), path)
