"""Shell permissions: the checker's time per line on the oracle corpus, and the oracle figures.

`python -m bench.bench_permissions [SEED] [COUNT] [--no-oracle]` prints what one `decide()`
costs per corpus line (cold: every line is new to the parse cache, as on a real tool call)
for `approve` with allow rules, `smart_approve`, and `auto` with a deny rule; median, p99
and max, and the first-parse cost on typical commands. Without `--no-oracle` it also runs
the corpus through the strace oracle (tests/agent/shell_corpus/evaluate.py) and prints the
bypass counts.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gosling.agent.permissions import PermissionMode, decide
from gosling.agent.permissions.shell_parse import analyse
from tests.agent.shell_corpus.evaluate import ALLOW_RULES, DENY_RULES, corpus, evaluate
from tests.agent.shell_corpus.oracle import make_template

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
SETS = {
    "approve_allow_rules": (PermissionMode.APPROVE, ALLOW_RULES),
    "smart_approve": (PermissionMode.SMART_APPROVE, ()),
    "auto_deny_rm": (PermissionMode.AUTO, DENY_RULES),
}


def _timed(line: str, mode: PermissionMode, rules: Any, work: Path) -> float:
    start = time.perf_counter()
    decide("developer__shell", {"command": line}, None, mode, rules, work)
    return (time.perf_counter() - start) * 1e6


def checker_cost(lines: list[str], work: Path) -> dict[str, dict[str, float]]:
    _timed("true", PermissionMode.APPROVE, ALLOW_RULES, work)  # import tree-sitter once
    out: dict[str, dict[str, float]] = {}
    for name, (mode, rules) in SETS.items():
        analyse.cache_clear()
        costs = sorted(_timed(line, mode, rules, work) for line in lines)
        out[name] = {
            "median_us": round(statistics.median(costs), 1),
            "p99_us": round(costs[int(len(costs) * 0.99)], 1),
            "max_us": round(costs[-1], 1),
            "mean_us": round(statistics.fmean(costs), 1),
        }
    analyse.cache_clear()
    out["typical_first_parse"] = {
        "median_us": round(
            statistics.median(
                _timed(c, PermissionMode.APPROVE, ALLOW_RULES, work) for c in TYPICAL
            ),
            1,
        )
    }
    return out


def run(seed: int = 26, count: int = 5_000, oracle: bool = True) -> dict[str, Any]:
    lines = [line for _, line in corpus(seed, count)]
    with tempfile.TemporaryDirectory() as tmp:
        work = make_template(Path(tmp) / "in")
        result: dict[str, Any] = {"seed": seed, "lines": len(lines)}
        result["decide_per_line"] = checker_cost(lines, work)
    if oracle:
        with tempfile.TemporaryDirectory() as tmp:
            report = evaluate(seed, count, Path(tmp))
        result["oracle"] = {
            "allowed_by_rules": report.allowed,
            "allow_bypasses": len(report.allow_bypasses),
            "smart_allowed": report.smart_allowed,
            "smart_bypasses": len(report.smart_bypasses),
            "lines_running_rm": report.deleting,
            "denied": report.deleting_denied,
            "asked": report.deleting_asked,
            "deny_bypasses": len(report.deny_bypasses),
            "rm_inside_another_language": report.language_allowed,
            "oracle_s": round(report.oracle_seconds, 1),
        }
    return result


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:] if a.isdigit()]
    seed, count = (numbers + [26, 5_000][len(numbers) :])[:2]
    print(json.dumps(run(seed, count, "--no-oracle" not in sys.argv), indent=2))
