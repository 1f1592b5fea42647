"""The test command of one mutant: only the tests that run the mutated lines.

`python -m bench.mutation_select MAP ORIGINALS -- PYTEST_ARGS...`

`bench.mutation` records, before any mutant, which tests run each line of the area's modules
(coverage with one context per test: `coverage_map`). cosmic-ray then writes one mutant at a
time into a module and runs this command. It compares each module with its original copy
under ORIGINALS to find the changed lines, and runs pytest on the tests that ran them (a line
inside a statement counts as the statement's first line, which is what coverage records).
When no recorded test ran them (code that only runs in a child process, say), it runs the
area's whole test command (PYTEST_ARGS), as without a map: a mutant can only look better
for lack of data, never worse. Exit status: pytest's.
"""

from __future__ import annotations

import ast
import difflib
import json
import subprocess
import sys
from pathlib import Path


def changed_lines(original: str, mutated: str) -> list[int]:
    """1-based line numbers of `original` that `mutated` changes (or inserts beside)."""
    matcher = difflib.SequenceMatcher(None, original.splitlines(), mutated.splitlines())
    lines: list[int] = []
    for tag, start, end, _, _ in matcher.get_opcodes():
        if tag != "equal":
            lines.extend(range(start + 1, max(end, start + 1) + 1))
    return lines


def statement_starts(source: str) -> dict[int, int]:
    """Each line -> the first line of the innermost statement holding it (what coverage
    records when the statement runs)."""
    starts: dict[int, tuple[int, int]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt):
            end = node.end_lineno or node.lineno
            for line in range(node.lineno, end + 1):
                span = end - node.lineno
                if line not in starts or span < starts[line][1]:
                    starts[line] = (node.lineno, span)
    return {line: start for line, (start, _) in starts.items()}


def tests_for(
    covered: dict[str, list[str]], lines: list[int], starts: dict[int, int]
) -> set[str] | None:
    """The tests that ran the statements of `lines`; None when one of them ran under no
    recorded test (at import, in a child process, or never): then only the whole command
    can tell."""
    found: set[str] = set()
    for line in lines:
        tests = covered.get(str(starts.get(line, line)))
        if not tests:
            return None
        found.update(tests)
    return found


def main(argv: list[str]) -> int:
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
    split = argv.index("--")
    try:
        selected = _selected(argv[:split])
    except (OSError, ValueError, KeyError):
        selected = set()  # no usable map: the whole command, as without one
    if selected:
        return subprocess.call([*command, *sorted(selected)])
    return subprocess.call([*command, *argv[split + 1 :]])


def _selected(args: list[str]) -> set[str]:
    """The tests to run for the mutant on disk; empty: run the whole command."""
    map_path, originals = Path(args[0]), Path(args[1])
    coverage: dict[str, dict[str, list[str]]] = json.loads(map_path.read_text())
    selected: set[str] = set()
    for module, covered in coverage.items():
        original = (originals / module).read_text()
        current = Path(module).read_text()
        if current == original:
            continue
        tests = tests_for(covered, changed_lines(original, current), statement_starts(original))
        if tests is None:
            return set()
        selected |= tests
    return selected


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
