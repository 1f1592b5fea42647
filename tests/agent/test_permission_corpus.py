"""The bash oracle: 5,000 generated lines judged by `decide` and run by real bash under strace.

Every family of issue 26 (control characters, backslash-newlines, arithmetic on a file's
content, xargs/env option forms, the command hash and namerefs, here-doc delimiters, `sh -c`
read by dash, git in a bare repository committed to the clone, git writes, argument
policies, eval/trap/compgen/command, wrappers) plus random lines run in one bubblewrap
sandbox with every execve traced. No line that the allow rules (or smart_approve) approve
may run or change more than they name, and no line allowed past a deny rule on `rm` may run
rm (rm inside another language is counted apart: the README says deny does not reach it).
Set GOSLING_PERMISSION_SEED to try another seed; `python -m bench permissions` prints the
figures.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.agent.shell_corpus.evaluate import evaluate
from tests.agent.shell_corpus.oracle import unavailable

SEED = int(os.environ.get("GOSLING_PERMISSION_SEED", "26"))
LINES = 5_000
MISSING = unavailable()


@pytest.mark.timeout(1800)  # a few minutes of processes; far longer on a loaded machine
@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
def test_no_allow_or_deny_bypass_on_the_traced_corpus(tmp_path: Path) -> None:
    report = evaluate(SEED, LINES, tmp_path)
    print("\n".join(report.summary()))
    assert report.lines >= LINES
    # Not vacuous: the rules approved real lines and many lines really ran rm.
    assert report.allowed > 50 and report.smart_allowed > 100 and report.deleting > 500
    assert report.allow_bypasses == []
    assert report.smart_bypasses == []
    assert report.deny_bypasses == []
