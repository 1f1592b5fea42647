"""The permission corpus judged against the bash oracle: the figures issue 26 asks for.

Three judgements on every line:
- allow: `approve` mode with allow rules for `ls`, `cat`, `git status` and `git diff`. A
  bypass is a line they approve whose real run executed anything else (or git with another
  subcommand) or changed a file outside `.git/`.
- smart: `smart_approve` mode with no rules. A bypass is an approved line whose run
  executed a program outside the read-only table or changed a file.
- deny: `auto` mode with a deny rule for `rm` (and `approve` with the deny and allow rules).
  A bypass is a line allowed to run whose real run executed rm. Lines of the `language`
  family (rm inside python, awk, perl, git aliases, sed `e`) are counted apart: a deny rule
  is documented not to reach inside another language.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gosling.agent.permissions import (
    PermissionMode,
    PermissionRule,
    Verdict,
    decide,
    rules_from_lists,
)
from gosling.agent.permissions.shell_policies import GIT, PROGRAMS
from tests.agent.shell_corpus.families import LANGUAGE, family_lines
from tests.agent.shell_corpus.generate import Generator
from tests.agent.shell_corpus.oracle import Outcome, make_template, run_lines

SHELL = "developer__shell"
ALLOW_RULES = rules_from_lists(
    allow=[f"{SHELL}(ls)", f"{SHELL}(cat)", f"{SHELL}(git status)", f"{SHELL}(git diff)"]
)
DENY_RULES = rules_from_lists(deny=[f"{SHELL}(rm)"])
BOTH_RULES = (*DENY_RULES, *ALLOW_RULES)


@dataclass
class CorpusReport:
    seed: int
    lines: int = 0
    families: dict[str, int] = field(default_factory=dict)
    allowed: int = 0
    smart_allowed: int = 0
    deleting: int = 0
    deleting_denied: int = 0
    deleting_asked: int = 0
    language_allowed: int = 0
    allow_bypasses: list[str] = field(default_factory=list)
    smart_bypasses: list[str] = field(default_factory=list)
    deny_bypasses: list[str] = field(default_factory=list)
    oracle_seconds: float = 0.0
    decide_us: float = 0.0

    def summary(self) -> list[str]:
        return [
            f"seed {self.seed}: {self.lines} lines ({len(self.families)} families + random)",
            f"allow ls/cat/git status/git diff (approve): {self.allowed} approved, "
            f"{len(self.allow_bypasses)} bypasses",
            f"smart_approve: {self.smart_allowed} approved, {len(self.smart_bypasses)} bypasses",
            f"deny rm (auto; approve + allow rules): {self.deleting} lines ran rm; "
            f"{self.deleting_denied} denied, {self.deleting_asked} asked, "
            f"{len(self.deny_bypasses)} bypasses; {self.language_allowed} allowed inside "
            "another language (documented)",
            f"oracle {self.oracle_seconds:.0f} s; decide() {self.decide_us:.0f} us per line",
        ]


def corpus(seed: int, count: int) -> list[tuple[str, str]]:
    """At least `count` distinct lines: every family, then random lines."""
    seen: dict[str, str] = {}
    for family, line in family_lines(seed, max(count // 40, 20)):
        seen.setdefault(line, family)
    for line in Generator(seed).commands(count * 2):
        if len(seen) >= count:
            break
        seen.setdefault(line, "random")
    return [(family, line) for line, family in seen.items()]


def within(outcome: Outcome, allowed: Sequence[str], git: frozenset[str]) -> bool:
    if outcome.changed:
        return False
    for call in outcome.execs:
        name = call[0].rsplit("/", 1)[-1]
        if name == "git":
            words = [w for w in call[2:] if not w.startswith("-")]
            if not words or words[0] not in git:
                return False
        elif name not in allowed:
            return False
    return True


def evaluate(seed: int, count: int, root: Path) -> CorpusReport:
    entries = corpus(seed, count)
    lines = [line for _, line in entries]
    report = CorpusReport(seed=seed, lines=len(lines))
    for family, _ in entries:
        report.families[family] = report.families.get(family, 0) + 1
    work = make_template(root / "in")
    started = time.perf_counter()
    allow = [_verdict(line, PermissionMode.APPROVE, ALLOW_RULES, work) for line in lines]
    report.decide_us = (time.perf_counter() - started) / max(len(lines), 1) * 1e6
    smart = [_verdict(line, PermissionMode.SMART_APPROVE, (), work) for line in lines]
    started = time.perf_counter()
    outcomes = run_lines(lines, root)
    report.oracle_seconds = time.perf_counter() - started
    read_only = frozenset(GIT.subcommands)
    for (family, line), outcome, by_rule, by_smart in zip(
        entries, outcomes, allow, smart, strict=True
    ):
        if by_rule is Verdict.ALLOW:
            report.allowed += 1
            if not within(outcome, ("ls", "cat"), frozenset({"status", "diff"})):
                report.allow_bypasses.append(line)
        if by_smart is Verdict.ALLOW:
            report.smart_allowed += 1
            if not within(outcome, tuple(PROGRAMS), read_only):
                report.smart_bypasses.append(line)
        if not outcome.ran("rm"):
            continue
        report.deleting += 1
        verdicts = {
            _verdict(line, PermissionMode.AUTO, DENY_RULES, work),
            _verdict(line, PermissionMode.APPROVE, BOTH_RULES, work),
        }
        if Verdict.ALLOW in verdicts:
            if family == LANGUAGE:
                report.language_allowed += 1
            else:
                report.deny_bypasses.append(line)
        elif verdicts == {Verdict.DENY}:
            report.deleting_denied += 1
        else:
            report.deleting_asked += 1
    return report


def _verdict(
    line: str, mode: PermissionMode, rules: Sequence[PermissionRule], work: Path
) -> Verdict:
    return decide(SHELL, {"command": line}, None, mode, rules, work).verdict
