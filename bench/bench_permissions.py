"""Shell permissions: the generated corpus against the bash oracle, and decide() cost.

`python -m bench.bench_permissions [SEED] [COUNT]` prints the closing-note figures: commands,
allowed by rule, asked, denied, violations (see tests/agent/shell_corpus/evaluate.py for
the rule sets), and what one `decide()` costs on typical commands, first parse and cached.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gosling.agent.permissions import PermissionMode, decide, rules_from_lists
from gosling.agent.permissions.shell_parse import analyse
from tests.agent.shell_corpus.evaluate import evaluate

TYPICAL = (
    "git status",
    "ls -la src",
    "cat README.md | head -50",
    "cd src && pytest -q tests/test_x.py 2>&1 | tail -20",
    "grep -rn 'def main' --include=*.py .",
    "find . -name '*.py' -not -path './.venv/*' | xargs wc -l",
    "git diff HEAD~1 -- agent/permissions/ > /tmp/x.diff; echo done",
    "python -c 'import sys; print(sys.version)'",
)
RULES = rules_from_lists(
    allow=["developer__shell(git status)", "developer__shell(ls)", "developer__shell(cat)"],
    deny=["developer__shell(rm)"],
    ask=["developer__shell(git push)"],
)


def _decide_us(command: str) -> float:
    start = time.perf_counter()
    decide("developer__shell", {"command": command}, None, PermissionMode.APPROVE, RULES, Path("."))
    return (time.perf_counter() - start) * 1e6


def decide_cost() -> dict[str, float]:
    _decide_us("true")  # import tree-sitter and build the parser once
    analyse.cache_clear()
    cold = [_decide_us(c) for c in TYPICAL]
    warm = [_decide_us(c) for c in TYPICAL for _ in range(50)]
    return {
        "first_parse_median_us": round(statistics.median(cold), 1),
        "first_parse_max_us": round(max(cold), 1),
        "cached_median_us": round(statistics.median(warm), 1),
    }


def run(seed: int = 14, count: int = 5_000) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        report = evaluate(seed, count, Path(tmp))
    return {
        "seed": seed,
        "commands": report.commands,
        "allow_rules": {
            "allowed_by_rule": report.allowed_by_rule,
            "asked": report.allow_asked,
            "violations": len(report.allow_violations),
        },
        "deny_rm": {
            "deleting_commands": report.deleting,
            "denied": report.deleting_denied,
            "asked": report.deleting_asked,
            "violations": len(report.deny_violations),
        },
        "oracle_s": round(report.oracle_seconds, 1),
        "decide": decide_cost(),
    }


if __name__ == "__main__":
    arguments = [int(a) for a in sys.argv[1:3]]
    print(json.dumps(run(*arguments), indent=2))
