"""Allow rules and `smart_approve` approve a shell line only inside the closed grammar.

`approve_line` says ALLOW when the whole line is inside `shell_grammar` and every simple
command in it is vouched for:

- a prefix rule (`developer__shell(git diff)`) covers a command whose argv starts with its
  words; when gosling has an argument policy for that command (`shell_policies`: `ls`,
  `cat`, `git diff`, ...) the rest of the argv must pass it too, so `git diff` does not
  approve `git diff --output=F`; a command without a policy (`pytest`) takes any further
  plain words;
- in `smart_approve`, a command that passes its read-only policy needs no rule;
- `cd`, `pwd`, `true`, `false`, `echo` need no rule, and `cd` only into a directory whose
  git repository is the working directory's own (a repository committed inside a clone
  would run its own config);
- a program found on PATH inside the working directory is never vouched for.
Everything else asks; the reason names the first command that was not vouched for.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gosling.agent.permissions.rules import PermissionRule
from gosling.agent.permissions.shell_grammar import SimpleCommand, read_closed
from gosling.agent.permissions.shell_policies import GIT, NEUTRAL, PROGRAMS
from gosling.agent.permissions.shell_policy_check import check_argv

BUILTINS = frozenset({"cd", "pwd", "true", "false", "echo", "printf"})


@dataclass(frozen=True)
class Approval:
    allowed: bool
    reason: str


def approve_line(
    command: str, allows: Sequence[PermissionRule], *, smart: bool, working_dir: Path
) -> Approval:
    """Whether the allow rules (and, with `smart`, the read-only policies) vouch for every
    command of `command`; the reason says which rule did, or what was not vouched for."""
    reading = read_closed(command)
    if reading.refusal is not None:
        return Approval(False, f"it is outside what allow rules can vouch for ({reading.refusal})")
    cwd = working_dir
    used: list[str] = []
    for simple in reading.commands:
        if simple.argv[0] == "cd":
            moved = _cd(simple, cwd, working_dir)
            if isinstance(moved, str):
                return Approval(False, moved)
            cwd = moved
            continue
        reason = _vouch(simple, allows, smart=smart, working_dir=working_dir, used=used)
        if reason is not None:
            return Approval(False, reason)
    if used:
        return Approval(True, f"rule {', '.join(dict.fromkeys(used))}")
    return Approval(True, "read-only command (smart_approve mode)" if smart else "no effect")


def _vouch(
    simple: SimpleCommand,
    allows: Sequence[PermissionRule],
    *,
    smart: bool,
    working_dir: Path,
    used: list[str],
) -> str | None:
    argv = simple.argv
    shown = " ".join(argv)
    outside = check_argv(argv, simple.globbed)
    rule = next((r for r in allows if _prefix_matches(r, argv)), None)
    if rule is not None:
        if outside is not None and _has_policy(argv):
            return f"rule '{rule.describe()}' does not vouch for this: {outside}"
    elif outside is not None:
        return f"no allow rule covers {shown}" if not _has_policy(argv) else outside
    elif not smart and argv[0] not in NEUTRAL:
        return f"no allow rule covers {shown}"
    local = _found_inside(argv[0], working_dir)
    if local is not None:
        return f"{argv[0]} is {local}, a program inside the project"
    if rule is not None:
        used.append(f"'{rule.describe()}'")
    return None


def _prefix_matches(rule: PermissionRule, argv: tuple[str, ...]) -> bool:
    prefix = rule.argv_prefix
    return prefix is not None and len(argv) >= len(prefix) and argv[: len(prefix)] == prefix


def _has_policy(argv: tuple[str, ...]) -> bool:
    """gosling has an argument policy for this command (so a rule cannot widen it)."""
    if argv[0] != "git":
        return argv[0] in PROGRAMS
    words = [w for w in argv[1:] if not w.startswith("-")]
    options_first = argv[1:2] != tuple(words[:1])
    return options_first or (bool(words) and words[0] in GIT.subcommands)


def _cd(simple: SimpleCommand, cwd: Path, working_dir: Path) -> Path | str:
    argv = simple.argv
    if len(argv) != 2 or argv[1].startswith("-") or simple.globbed[1]:
        return "cd other than into one named directory"
    target = argv[1]
    if os.environ.get("CDPATH") and not target.startswith(("/", ".")):
        return "cd with CDPATH set may go elsewhere"
    resolved = (cwd / target).resolve()
    theirs = repository_of(resolved)
    if theirs is not None and theirs != repository_of(working_dir.resolve()):
        return f"cd into {target}, which holds a git repository other than the project's"
    return resolved


def repository_of(path: Path) -> Path | None:
    """The git repository git would find from `path`: a `.git` entry, or a bare repository
    (HEAD, objects/ and refs/) in it or a parent."""
    for directory in (path, *path.parents):
        if (directory / ".git").exists():
            return directory / ".git"
        if (
            (directory / "HEAD").is_file()
            and (directory / "objects").is_dir()
            and (directory / "refs").is_dir()
        ):
            return directory
    return None


def _found_inside(program: str, working_dir: Path) -> str | None:
    if program in BUILTINS:
        return None
    found = shutil.which(program, path=os.environ.get("PATH", ""))
    if found is None:
        return None
    real = Path(found).resolve()
    return str(real) if real.is_relative_to(working_dir.resolve()) else None
