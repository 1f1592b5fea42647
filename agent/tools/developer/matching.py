"""Finding the text an edit replaces, and explaining to the model why it was not found.

An edit must match exactly once. When it matches nowhere, the model most often got the
indentation or a line slightly wrong, so the error shows the most similar lines of the
file (difflib) with line numbers. When it matches several times, the error shows where.
"""

from __future__ import annotations

import difflib

MAX_WINDOWS = 20_000
"""Most candidate windows compared when looking for the closest lines (bounds the cost)."""


def numbered(lines: list[str], first_line: int) -> str:
    """Lines prefixed with their 1-based numbers, like `cat -n`."""
    width = len(str(first_line + len(lines) - 1))
    return "\n".join(f"{n:>{width}}\t{line}" for n, line in enumerate(lines, start=first_line))


def line_of(text: str, offset: int) -> int:
    """The 1-based line number of a character offset."""
    return text.count("\n", 0, offset) + 1


def occurrences(text: str, needle: str) -> list[int]:
    """Offsets of every (possibly overlapping) occurrence of `needle`."""
    found: list[int] = []
    start = text.find(needle)
    while start != -1:
        found.append(start)
        start = text.find(needle, start + 1)
    return found


def closest_lines(text: str, needle: str, context: int = 2) -> tuple[int, list[str], float] | None:
    """The window of lines most similar to `needle`: (first line number, lines, similarity).

    The window is as long as `needle` in lines, widened by `context` lines on each side.
    """
    lines = text.splitlines()
    wanted = needle.strip("\n").splitlines() or [needle]
    size = min(len(wanted), len(lines))
    if size == 0:
        return None
    target = "\n".join(line.strip() for line in wanted)
    best_start, best_ratio = 0, -1.0
    starts = range(len(lines) - size + 1)
    step = max(1, len(starts) // MAX_WINDOWS)
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    for start in starts[::step]:
        matcher.set_seq1("\n".join(line.strip() for line in lines[start : start + size]))
        if matcher.real_quick_ratio() <= best_ratio or matcher.quick_ratio() <= best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best_start, best_ratio = start, ratio
    first = max(0, best_start - context)
    last = min(len(lines), best_start + size + context)
    return first + 1, lines[first:last], best_ratio


def snippet_around(text: str, first_line: int, line_count: int, context: int = 3) -> str:
    """Numbered lines `first_line .. first_line+line_count-1` with some context."""
    lines = text.splitlines()
    start = max(1, first_line - context)
    end = min(len(lines), first_line + max(line_count, 1) - 1 + context)
    return numbered(lines[start - 1 : end], start)
