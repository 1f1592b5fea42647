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
    """What git ignores below the first of `directories` (the git root), as `git check-ignore`
    decides it: `core.excludesFile`, then `.git/info/exclude`, then every `.gitignore` from
    the root down to the file's own directory, each applied to paths below its directory.

    Later sources win (a deeper `.gitignore` over a shallower one, any `.gitignore` over the
    exclude files), and so do later lines, `!` negations included.
    """

    def __init__(self, directories: list[Path], cache: SpecCache | None = None) -> None:
        self._top = directories[0] if directories else None
        self._cache = cache
        self._per_directory: dict[Path, pathspec.GitIgnoreSpec | None] = {}

    @cached_property
    def _repository_specs(self) -> list[tuple[Path, pathspec.GitIgnoreSpec]]:
        """The exclude files, lowest precedence first; their patterns are root-relative."""
        if self._top is None:
            return []
        specs = []
        for file in exclude_files(self._top):
            spec = self._compile(file)
            if spec is not None:
                specs.append((self._top, spec))
        return specs

    def _gitignore(self, directory: Path) -> pathspec.GitIgnoreSpec | None:
        if directory not in self._per_directory:
            self._per_directory[directory] = self._compile(directory / ".gitignore")
        return self._per_directory[directory]

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

    def is_ignored(self, path: Path, *, is_dir: bool = False) -> bool:
        """Whether git would ignore `path` (absolute, spelled like the root).

        Anything under an ignored directory stays ignored even if a later rule negates it,
        as in git.
        """
        if self._top is None:
            return False
        try:
            parts = path.relative_to(self._top).parts
        except ValueError:
            return False
        if not parts:
            return False
        current = self._top
        for part in parts[:-1]:
            current = current / part
            if self._verdict(current, is_dir=True):
                return True
        return self._verdict(path, is_dir=is_dir)

    def _verdict(self, path: Path, *, is_dir: bool) -> bool:
        assert self._top is not None
        specs = list(self._repository_specs)
        for directory in directories_between(self._top, path.parent):
            spec = self._gitignore(directory)
            if spec is not None:
                specs.append((directory, spec))
        ignored = False
        for directory, spec in specs:
            rel = path.relative_to(directory).as_posix()
            verdict = spec.check_file(rel + "/" if is_dir else rel).include
            if verdict is not None:
                ignored = verdict
        return ignored


def exclude_files(root: Path) -> list[Path]:
    """`core.excludesFile` (or git's default for it) and `info/exclude` of the repository
    at `root`, in git's order of precedence, lowest first."""
    git_dir = _git_dir(root)
    common = git_dir
    if git_dir is not None and (git_dir / "commondir").is_file():
        common = git_dir / (git_dir / "commondir").read_text().strip()
    configs = [_xdg_config_home() / "git" / "config", Path.home() / ".gitconfig"]
    if common is not None:
        configs.append(common / "config")
    excludes: str | None = None
    for config in configs:
        excludes = _core_excludes_file(config) or excludes
    files = [
        Path(os.path.expanduser(excludes)) if excludes else _xdg_config_home() / "git" / "ignore"
    ]
    if common is not None:
        files.append(common / "info" / "exclude")
    return files


def _git_dir(root: Path) -> Path | None:
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if text.startswith("gitdir:"):
        return (root / text.removeprefix("gitdir:").strip()).resolve()
    return None


def _xdg_config_home() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def _core_excludes_file(config: Path) -> str | None:
    """The last `excludesFile` of the `[core]` section of a git config file."""
    try:
        lines = config.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    section = ""
    found = None
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.strip("[]").strip().lower()
            continue
        key, sep, value = stripped.partition("=")
        if section == "core" and sep and key.strip().lower() == "excludesfile":
            found = value.strip().strip('"')
    return found


NO_RULES = GitignoreRules([])
