"""Repositories a sandboxed command creates where the user will run git.

The workspace's own `.git` is read-only inside the sandbox, but where there is none (the
working dir is a subdirectory of a repository, or no repository at all) a command can run
`git init` and `git config core.fsmonitor 'anything'`: the user's next `git status` in that
directory finds the new repository first and runs the command, outside the sandbox. The same
goes for hooks, filters and aliases.

So the places where a new `.git` would be found first (the workspace and every directory
from it down to the command's working dir) are noted before each sandboxed command, and a
`.git` that appeared in one of them during the command is moved aside (to
`.git.blocked-by-gosling`, nothing deleted) and reported to the model. A repository the user
wants is made by the user, or with the sandbox off.
"""

from __future__ import annotations

import os
from pathlib import Path

BLOCKED_NAME = ".git.blocked-by-gosling"


def watched_places(workspace: Path, cwd: Path) -> list[Path]:
    """The `.git` paths git would find first from `cwd`, up to the workspace, that do not
    exist now (the ones that do are read-only already)."""
    workspace, cwd = Path(os.path.abspath(workspace)), Path(os.path.abspath(cwd))
    if not (cwd == workspace or cwd.is_relative_to(workspace)):
        return []
    places = [workspace, *reversed([p for p in cwd.parents if p.is_relative_to(workspace)])]
    places = list(dict.fromkeys([*places, cwd]))
    return [p / ".git" for p in places if not os.path.lexists(p / ".git")]


def move_aside_new_repos(watched: list[Path]) -> list[tuple[Path, Path]]:
    """Move every `watched` `.git` that exists now out of git's way; (from, to) pairs."""
    moved: list[tuple[Path, Path]] = []
    for dot_git in watched:
        if not os.path.lexists(dot_git):
            continue
        target = dot_git.with_name(BLOCKED_NAME)
        n = 1
        while os.path.lexists(target):
            n += 1
            target = dot_git.with_name(f"{BLOCKED_NAME}-{n}")
        try:
            os.rename(dot_git, target)
        except OSError:
            continue
        moved.append((dot_git, target))
    return moved


def moved_note(moved: list[tuple[Path, Path]]) -> str:
    """What the model is told after a command made a repository."""
    where = ", ".join(f"{src} -> {dst.name}" for src, dst in moved)
    return (
        f"[gosling moved aside the .git this command created ({where}): a repository made "
        "inside the sandbox would run its hooks and config outside it, at the user's next "
        "git command. Ask the user to create the repository, or to turn the sandbox off.]"
    )
