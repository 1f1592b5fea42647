"""The permission corpus judged against the bash oracle: the figures issue 14 asks for.

Two rule sets are checked on every command:
- allow: `approve` mode with allow rules for `ls`, `cat` and `git status`. A violation is a
  command they approve whose real run went beyond them: a program other than ls, cat, echo
  or `git status` ran, or any file in the scratch dir was created, removed or modified.
- deny: `auto` mode with a deny rule for `rm` (and the same with the allow rules in
  `approve` mode). A violation is a command allowed to run whose real run executed rm or
  removed a file; each such command is either denied or asked.
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
from tests.agent.shell_corpus.generate import Generator
from tests.agent.shell_corpus.oracle import Outcome, run_batch

SHELL = "developer__shell"
ALLOW_RULES = rules_from_lists(
    allow=["developer__shell(ls)", "developer__shell(cat)", "developer__shell(git status)"]
)
DENY_RULES = rules_from_lists(deny=["developer__shell(rm)"])
BOTH_RULES = (*DENY_RULES, *ALLOW_RULES)


@dataclass
class CorpusReport:
    seed: int
    commands: int = 0
    allowed_by_rule: int = 0
    allow_asked: int = 0
    deleting: int = 0
    """Commands whose real run executed rm or removed a file."""
    deleting_denied: int = 0
    deleting_asked: int = 0
    allow_violations: list[str] = field(default_factory=list)
    deny_violations: list[str] = field(default_factory=list)
    oracle_seconds: float = 0.0
    decide_us: float = 0.0

    def lines(self) -> list[str]:
        return [
            f"seed {self.seed}: {self.commands} commands",
            f"allow ls/cat/git status (approve): {self.allowed_by_rule} allowed by rule, "
            f"{self.allow_asked} asked, {len(self.allow_violations)} violations",
            f"deny rm (auto, and approve + allow rules): {self.deleting} commands delete; "
            f"{self.deleting_denied} denied, {self.deleting_asked} asked, "
            f"{len(self.deny_violations)} violations",
            f"oracle {self.oracle_seconds:.1f} s; decide() {self.decide_us:.0f} us per command "
            "(cold parse cache)",
        ]


def within_allow_rules(outcome: Outcome) -> bool:
    """The real run stayed inside what `ls`, `cat`, `git status` (and echo) may do."""
    if outcome.changed:
        return False
    for argv in outcome.ran:
        if argv[0] in ("ls", "cat", "echo"):
            continue
        if argv[0] == "git" and argv[1:2] == ("status",):
            continue
        return False
    return True


def evaluate(seed: int, count: int, root: Path) -> CorpusReport:
    commands = Generator(seed).commands(count)
    report = CorpusReport(seed=seed, commands=len(commands))
    started = time.perf_counter()
    allow_verdicts = [_verdict(c, PermissionMode.APPROVE, ALLOW_RULES) for c in commands]
    report.decide_us = (time.perf_counter() - started) / max(len(commands), 1) * 1e6
    started = time.perf_counter()
    outcomes = run_batch(commands, root)
    report.oracle_seconds = time.perf_counter() - started
    for command, outcome, allowed in zip(commands, outcomes, allow_verdicts, strict=True):
        if allowed is Verdict.ALLOW:
            report.allowed_by_rule += 1
            if not within_allow_rules(outcome):
                report.allow_violations.append(command)
        else:
            report.allow_asked += 1
        if not outcome.deleted():
            continue
        report.deleting += 1
        verdicts = {
            _verdict(command, PermissionMode.AUTO, DENY_RULES),
            _verdict(command, PermissionMode.APPROVE, BOTH_RULES),
        }
        if Verdict.ALLOW in verdicts:
            report.deny_violations.append(command)
        elif verdicts == {Verdict.DENY}:
            report.deleting_denied += 1
        else:
            report.deleting_asked += 1
    return report


def _verdict(command: str, mode: PermissionMode, rules: Sequence[PermissionRule]) -> Verdict:
    return decide(SHELL, {"command": command}, None, mode, rules, Path("/w")).verdict
