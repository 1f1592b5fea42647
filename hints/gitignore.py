"""Git root discovery and the merged `.gitignore` rules that guard `@file` imports.

Compiling gitignore patterns costs milliseconds per file, and most hint files import nothing,
so the rules are read only when the first import has to be checked.
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

    SpecCache = dict[tuple[Path, int, int], pathspec.GitIgnoreSpec]


def find_git_root(directory: Path) -> Path | None:
    """The nearest ancestor of `directory` (itself included) holding `.git`, file or dir."""
    for candidate in (directory, *directory.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def directories_between(top: Path, bottom: Path) -> list[Path]:
    """`top`, then each directory down to `bottom` (both included); `[bottom]` if unrelated."""
    try:
        rel = bottom.relative_to(top)
    except ValueError:
        return [bottom]
    dirs = [top]
    for part in rel.parts:
        dirs.append(dirs[-1] / part)
    return dirs


class GitignoreRules:
    """Every `.gitignore` in `directories`, each applied to paths below its own directory.

    Deeper files are consulted later, so their rules (including `!` negations) win, as in git.
    """

    def __init__(self, directories: list[Path], cache: SpecCache | None = None) -> None:
        self._directories = directories
        self._cache = cache

    @cached_property
    def _specs(self) -> list[tuple[Path, pathspec.GitIgnoreSpec]]:
        specs = []
        for directory in self._directories:
            spec = self._compile(directory / ".gitignore")
            if spec is not None:
                specs.append((directory, spec))
        return specs

    def _compile(self, file: Path) -> pathspec.GitIgnoreSpec | None:
        try:
            stat = file.stat()
        except OSError:
            return None
        key = (file, stat.st_mtime_ns, stat.st_size)
        if self._cache is not None and key in self._cache:
            return self._cache[key]
        import pathspec

        try:
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        spec = pathspec.GitIgnoreSpec.from_lines(text.splitlines())
        if self._cache is not None:
            self._cache[key] = spec
        return spec

    def is_ignored(self, path: Path) -> bool:
        """Whether git would ignore the file `path` (absolute, spelled like the directories).

        A file under an ignored directory stays ignored even if a later rule negates it,
        as in git.
        """
        if not self._directories:
            return False
        top = self._directories[0]
        try:
            parts = path.relative_to(top).parts
        except ValueError:
            return False
        current = top
        for part in parts[:-1]:
            current = current / part
            if self._verdict(current, is_dir=True):
                return True
        return self._verdict(path, is_dir=False)

    def _verdict(self, path: Path, *, is_dir: bool) -> bool:
        ignored = False
        for directory, spec in self._specs:
            try:
                rel = path.relative_to(directory).as_posix()
            except ValueError:
                continue
            if rel == ".":
                continue
            verdict = spec.check_file(rel + "/" if is_dir else rel).include
            if verdict is not None:
                ignored = verdict
        return ignored


NO_RULES = GitignoreRules([])
