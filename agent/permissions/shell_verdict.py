"""Shell rules judged against every program a command line would run.

A deny or ask rule applies when it matches any invocation; one that might match (a word
only known at run time, arguments `xargs` appends) asks. An allow rule approves the command
only when every invocation that needs one is matched by an allow rule, and the command has
no effect beyond them (no file written, no PATH changed) and nothing unjudgeable. A command
that cannot be judged asks whenever a deny or ask shell rule exists that it might pass.
"""

from __future__ import annotations

import enum
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
        return Match.NO
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
    return _allowed(mine, analysis)


def not_allowed_reason(
    tool_name: str, analysis: ShellAnalysis, rules: Sequence[PermissionRule]
) -> str:
    """Why no allow rule approves the command (for the ask reason)."""
    if analysis.unknowns:
        return f"it cannot be judged ({analysis.unknowns[0]})"
    if analysis.effects:
        return analysis.effects[0]
    allows = [r for r in rules if tool_matches(r, tool_name) and r.action is Verdict.ALLOW]
    for invocation in analysis.invocations:
        if invocation.needs_allow and _covering(allows, invocation) is None:
            return f"no allow rule covers {invocation.describe()}"
    return "no allow rule covers it"


def _allowed(mine: list[PermissionRule], analysis: ShellAnalysis) -> Decision | None:
    allows = [r for r in mine if r.action is Verdict.ALLOW]
    if not allows or analysis.unknowns or analysis.effects:
        return None
    needed = [i for i in analysis.invocations if i.needs_allow]
    if not needed:
        return None
    covering = [_covering(allows, i) for i in needed]
    if any(rule is None for rule in covering):
        return None
    names = dict.fromkeys(f"'{rule.describe()}'" for rule in covering if rule is not None)
    return Decision(Verdict.ALLOW, f"rule {', '.join(names)}")


def _covering(allows: list[PermissionRule], invocation: Invocation) -> PermissionRule | None:
    for rule in allows:
        if rule.argv_prefix is None:
            return rule
        if match(rule.argv_prefix, invocation, for_allow=True) is Match.YES:
            return rule
    return None


def _first(
    rule: PermissionRule, invocations: list[Invocation], at_least: Match
) -> Invocation | None:
    assert rule.argv_prefix is not None
    for invocation in invocations:
        found = match(rule.argv_prefix, invocation, for_allow=False)
        if found.value >= at_least.value:
            return invocation
    return None
