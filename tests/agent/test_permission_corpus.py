"""5,000 generated command lines judged by `decide` and run by real bash (the oracle).

No command that the allow rules approve may do more than they name, and no command whose
real run deletes may get past a deny rule on `rm`. The seed is printed; set
GOSLING_PERMISSION_SEED to try another (`python -m bench.bench_permissions` prints figures).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.agent.shell_corpus.evaluate import evaluate

SEED = int(os.environ.get("GOSLING_PERMISSION_SEED", "14"))
COMMANDS = 5_000


@pytest.mark.timeout(900)  # ~30 s of CPU; far longer on a loaded shared machine
@pytest.mark.skipif(shutil.which("bash") is None, reason="the oracle needs bash")
def test_generated_corpus_has_no_allow_or_deny_bypass(tmp_path: Path) -> None:
    report = evaluate(SEED, COMMANDS, tmp_path)
    print("\n".join(report.lines()))
    assert report.commands == COMMANDS
    # The oracle saw real effects and the rules approved real commands: not a vacuous pass.
    assert report.deleting > COMMANDS // 20 and report.allowed_by_rule > COMMANDS // 20
    assert report.allow_violations == []
    assert report.deny_violations == []
