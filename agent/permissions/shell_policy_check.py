"""Whether one static argv stays inside its program's policy (`shell_policies`).

`check_argv(argv)` returns None when the program is known and every word is an option it
lists or an operand it accepts, else the reason it is not. Options are read the way GNU
getopt reads them (bundled short flags, `-xVALUE`, `--name=VALUE`, `--` ends options,
options after operands), but only exact listed names count: an abbreviation, an unknown
option or a glob that could expand to an option is outside the policy.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gosling.agent.permissions.shell_policies import GIT, PROGRAMS, Policy

Values = list[tuple[str, str]]
"""(option, value) for every valued option given."""


@dataclass(frozen=True)
class OptionTable:
    flags: frozenset[str]
    valued: frozenset[str]
    optional: frozenset[str]
    """Options whose value may only be attached (`-u[mode]`, `--color[=WHEN]`)."""


@functools.cache
def table(spec: str) -> OptionTable:
    flags: set[str] = set()
    valued: set[str] = set()
    optional: set[str] = set()
    for word in spec.split():
        if word.endswith("[=]"):
            optional.add(word[:-3])
        elif word.startswith("--") and word.endswith("="):
            valued.add(word[:-1])
        elif word.endswith("::") and len(word) > 2:
            optional.add(word[:-2])
        elif word.endswith(":") and len(word) > 1 and word != ":":
            valued.add(word[:-1])
        else:
            flags.add(word)
    return OptionTable(frozenset(flags), frozenset(valued), frozenset(optional))


def check_argv(argv: Sequence[str], globbed: Sequence[bool]) -> str | None:
    """None when `argv` is inside its program's policy; else why not. `globbed[i]` says
    that word i holds a glob (so it may become several operands)."""
    program = argv[0]
    if program == "git":
        return _check_git(argv, globbed)
    policy = PROGRAMS.get(program)
    if policy is None:
        return f"{program} is not a known read-only program"
    return _check(program, policy, list(argv[1:]), list(globbed[1:]))


def _check_git(argv: Sequence[str], globbed: Sequence[bool]) -> str | None:
    options = table(GIT.options)
    index = 1
    while index < len(argv) and argv[index].startswith("-") and argv[index] in options.flags:
        index += 1
    if index >= len(argv):
        return "git without a subcommand"
    name = argv[index]
    policy = GIT.subcommands.get(name)
    if policy is None:
        return f"git {name} is not a known read-only git command (or git option)"
    return _check(f"git {name}", policy, list(argv[index + 1 :]), list(globbed[index + 1 :]))


def _check(what: str, policy: Policy, args: list[str], globbed: list[bool]) -> str | None:
    operands: list[str] = []
    if policy.style == "find":
        return _check_find(policy, args, globbed)
    options = table(policy.options)
    values: Values = []
    index = 0
    ended = False
    while index < len(args):
        word = args[index]
        if ended or word == "-" or not word.startswith("-"):
            if globbed[index] and policy.positionals is not None:
                return f"a glob in {what}'s operands"
            operands.append(word)
            index += 1
            continue
        if word == "--":
            ended = True
            index += 1
            continue
        if globbed[index]:
            return f"a glob in {what}'s options"
        taken = _option(options, policy, word, args, index, values)
        if taken is None:
            return f"{what} {word} is not known to be read-only"
        index += taken
    if policy.positionals is not None and len(operands) > policy.positionals:
        return f"{what} takes at most {policy.positionals} operand(s) here"
    if policy.check is not None:
        return CHECKS[policy.check](operands, values)
    return None


def _option(
    known: OptionTable,
    policy: Policy,
    word: str,
    args: list[str],
    index: int,
    values: Values,
) -> int | None:
    """How many words the option at `index` takes, or None when it is not allowed."""
    if word.startswith("--"):
        name, eq, value = word.partition("=")
        if name in known.valued:
            if eq:
                values.append((name, value))
                return 1
            if index + 1 >= len(args):
                return None
            values.append((name, args[index + 1]))
            return 2
        if eq:
            return 1 if name in known.optional else None
        return 1 if name in known.flags or name in known.optional else None
    if word in known.flags:  # `-vv`, `-uu`, `-.` listed whole
        return 1
    if policy.numbers and word[1:].isdigit():
        return 1
    for position in range(1, len(word)):
        letter = f"-{word[position]}"
        rest = word[position + 1 :]
        if letter in known.flags:
            continue
        if letter in known.optional:
            return 1
        if letter in known.valued:
            if rest:
                values.append((letter, rest))
                return 1
            if index + 1 >= len(args):
                return None
            values.append((letter, args[index + 1]))
            return 2
        return None
    return 1


def _check_find(policy: Policy, args: list[str], globbed: list[bool]) -> str | None:
    options = table(policy.options)
    index = 0
    while index < len(args) and args[index] in ("-H", "-L", "-P"):
        index += 1
    while (
        index < len(args)
        and not args[index].startswith("-")
        and args[index] not in ("(", "!", ")", ",")
    ):
        index += 1  # the starting points
    while index < len(args):
        word = args[index]
        if word in options.valued:
            if index + 1 >= len(args):
                return f"find {word} has no value"
            index += 2
            continue
        if word not in options.flags or globbed[index]:
            return f"find {word} is not known to be read-only"
        index += 1
    return None


_SED_ADDRESS = r"(?:\d+|\$|/(?:[^/\\\n]|\\.)*/I?)"
_SED_COMMAND = re.compile(
    rf"^\s*(?:{_SED_ADDRESS}(?:\s*,\s*{_SED_ADDRESS})?)?\s*!?\s*"
    r"(?:[pdqQ=lnNgGhHxz]|q\d+|s/(?:[^/\\\n]|\\.)*/(?:[^/\\\n]|\\.)*/[gpiIm0-9]*"
    r"|y/(?:[^/\\\n]|\\.)*/(?:[^/\\\n]|\\.)*/)?\s*$"
)


def _sed(operands: list[str], values: Values) -> str | None:
    """Only printing, deleting and substituting scripts: no `e`, `w`, `r`, `W` commands or
    flags, no `{}` blocks; script files (`-f`) are not listed at all."""
    given = [value for name, value in values if name in ("-e", "--expression")]
    scripts = given if given else operands[:1]
    if not scripts:
        return "sed without a script"
    for script in scripts:
        for command in re.split(r"[;\n]", script):
            if not _SED_COMMAND.match(command):
                return f"the sed command {command.strip()!r} is not known to be read-only"
    return None


def _date(operands: list[str], values: Values) -> str | None:
    if any(not operand.startswith("+") for operand in operands):
        return "date with an operand that is not +FORMAT sets the clock"
    return None


def _git_stash(operands: list[str], values: Values) -> str | None:
    return None if operands[:1] in (["list"], ["show"]) else "git stash that changes the stash"


def _git_list(operands: list[str], values: Values) -> str | None:
    return None if operands == ["list"] else "git worktree other than list"


CHECKS: dict[str, Callable[[list[str], Values], str | None]] = {
    "sed": _sed,
    "date": _date,
    "git_stash": _git_stash,
    "git_list": _git_list,
}
