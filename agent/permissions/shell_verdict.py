"""Deny and ask shell rules judged against every program a command line would run.

A deny or ask rule applies when it matches any invocation; one that might match (a word
only known at run time, arguments `xargs` appends, a program gosling does not know that is
handed the rule's program name) asks. A command that cannot be judged asks whenever a deny
or ask shell rule exists. Allow rules are not judged here but in `shell_allow`, on the
closed grammar.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence

from gosling.agent.permissions.rules import Decision, PermissionRule, Verdict, tool_matches
from gosling.agent.permissions.shell_model import Invocation, ShellAnalysis, base_name, program_name


class Match(enum.Enum):
    NO = 0
    MAYBE = 1
    YES = 2


def match(prefix: Sequence[str], invocation: Invocation, *, for_allow: bool) -> Match:
    """Whether `invocation` starts with the rule's words.

    Deny/ask rules compare the program's base name (`/bin/rm`, `./rm` are `rm`); allow rules
    accept only the bare name or a system path to it (a repo's `./ls` is not `ls`)."""
    argv = invocation.argv
    if not prefix or not argv:
        return Match.NO
    result = Match.YES
    head = argv[0]
    if head is None:
        result = Match.MAYBE
    elif for_allow:
        if head != prefix[0] and program_name(head) != prefix[0]:
            return Match.NO
    elif head != prefix[0] and base_name(head) != base_name(prefix[0]):
        return _handed(prefix[0], invocation)
    for index, expected in enumerate(prefix[1:], start=1):
        if index >= len(argv):
            if not invocation.open_tail:
                return Match.NO
            result = Match.MAYBE
            continue
        word = argv[index]
        if word is None:
            result = Match.MAYBE
        elif word != expected:
            return Match.NO
    return result


def _handed(program: str, invocation: Invocation) -> Match:
    """A program gosling does not know may be a wrapper: handed the rule's program name (or
    a word only known at run time) it might run it."""
    if not invocation.opaque:
        return Match.NO
    name = base_name(program)
    for word in invocation.argv[1:]:
        if word is None:
            return Match.MAYBE
        if any(base_name(piece) == name for piece in re.split(r"[=:,\s]", word) if piece):
            return Match.MAYBE
    return Match.NO


def shell_verdict(
    tool_name: str, analysis: ShellAnalysis, rules: Sequence[PermissionRule]
) -> Decision | None:
    """Deny/ask/allow from the rules, or None when no rule decides (the mode does)."""
    mine = [r for r in rules if tool_matches(r, tool_name) and r.paths is None]
    for action in (Verdict.DENY, Verdict.ASK):
        for rule in (r for r in mine if r.action is action):
            if rule.argv_prefix is None:
                return Decision(action, f"rule '{rule.describe()}'")
            hit = _first(rule, analysis.invocations, Match.YES)
            if hit is not None:
                return Decision(action, f"rule '{rule.describe()}' (it runs {hit.describe()})")
    guards = [r for r in mine if r.action is not Verdict.ALLOW and r.argv_prefix]
    for rule in guards:
        hit = _first(rule, analysis.invocations, Match.MAYBE)
        if hit is not None:
            return Decision(
                Verdict.ASK, f"{hit.describe()} might be covered by rule '{rule.describe()}'"
            )
    if analysis.unknowns and guards:
        return Decision(Verdict.ASK, f"it cannot be judged ({analysis.unknowns[0]})")
    return None


def shell_allow_rules(tool_name: str, rules: Sequence[PermissionRule]) -> list[PermissionRule]:
    """The allow rules that apply to this shell tool."""
    return [
        r
        for r in rules
        if r.action is Verdict.ALLOW and tool_matches(r, tool_name) and r.paths is None
    ]


def _first(
    rule: PermissionRule, invocations: list[Invocation], at_least: Match
) -> Invocation | None:
    assert rule.argv_prefix is not None
    for invocation in invocations:
        found = match(rule.argv_prefix, invocation, for_allow=False)
        if found.value >= at_least.value:
            return invocation
    return None
