"""Mutation testing runs, for each mutant, the tests that ran its statement; a statement no
recorded test ran (import time, a child process) gets the area's whole test command."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench import mutation_select
from bench.mutation_select import changed_lines, statement_starts

select_tests = mutation_select.tests_for

SOURCE = """\
LIMIT = 8


def check(value):
    if len(value) >= LIMIT and (
        value.strip()
    ):
        return True
    return False
"""


def test_a_change_inside_a_statement_maps_to_the_statement_and_its_tests() -> None:
    mutated = SOURCE.replace("        value.strip()", "        not value.strip()")
    lines = changed_lines(SOURCE, mutated)
    assert lines == [6]
    starts = statement_starts(SOURCE)
    assert starts[6] == 5 and starts[8] == 8 and starts[1] == 1
    covered = {"1": [], "5": ["t.py::test_a", "t.py::test_b"], "8": ["t.py::test_a"]}
    assert select_tests(covered, lines, starts) == {"t.py::test_a", "t.py::test_b"}
    # LIMIT only ran at import: no test can be picked, so the whole command runs
    limit = changed_lines(SOURCE, SOURCE.replace("= 8", "= 9"))
    assert select_tests(covered, limit, starts) is None
    assert select_tests(covered, [9], starts) is None  # `return False` ran under no test


def test_the_runner_runs_only_the_selected_tests_or_else_the_whole_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    originals = tmp_path / "originals"
    (originals / "pkg").mkdir(parents=True)
    (originals / "pkg" / "m.py").write_text(SOURCE)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SOURCE.replace("return True", "return None"))
    coverage = {"pkg/m.py": {"8": ["tests/t.py::test_true"], "9": []}}
    (tmp_path / "map.json").write_text(json.dumps(coverage))
    calls: list[list[str]] = []
    monkeypatch.chdir(tmp_path)

    def call(argv: list[str]) -> int:
        calls.append(argv)
        return 0

    monkeypatch.setattr("subprocess.call", call)
    args = [str(tmp_path / "map.json"), str(originals), "--", "tests", "-m", "not slow"]
    assert mutation_select.main(args) == 0
    assert calls[-1][:3] == [sys.executable, "-m", "pytest"]
    assert calls[-1][-1] == "tests/t.py::test_true" and "tests" not in calls[-1]
    (tmp_path / "pkg" / "m.py").write_text(SOURCE.replace("return False", "return 0"))
    mutation_select.main(args)
    assert calls[-1][-3:] == ["tests", "-m", "not slow"]  # line 9 ran under no test
    (tmp_path / "map.json").write_text("{not json")
    mutation_select.main(args)
    assert calls[-1][-3:] == ["tests", "-m", "not slow"]  # no usable map: as without one
