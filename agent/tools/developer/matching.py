"""Finding the text an edit replaces, and explaining to the model why it was not found.

An edit must match exactly once. When it matches nowhere, the model most often got the
indentation or a line slightly wrong, so the error shows the most similar lines of the
file (difflib) with line numbers. When it matches several times, the error shows where.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

LISTED_MATCHES = 10
"""Line numbers named in the error for an ambiguous edit (the count is always given)."""
MAX_WINDOWS = 20_000
"""Most candidate windows compared when looking for the closest lines (bounds the cost)."""


def numbered(lines: list[str], first_line: int) -> str:
    """Lines prefixed with their 1-based numbers, like `cat -n`."""
    width = len(str(first_line + len(lines) - 1))
    return "\n".join(f"{n:>{width}}\t{line}" for n, line in enumerate(lines, start=first_line))


def line_of(text: str, offset: int) -> int:
    """The 1-based line number of a character offset."""
    return text.count("\n", 0, offset) + 1


@dataclass(frozen=True)
class Matches:
    count: int
    """How many times the needle occurs (0, 1, or a count of non-overlapping matches)."""
    offsets: tuple[int, ...]
    """The first few offsets (at most `LISTED_MATCHES`)."""


def find_unique(text: str, needle: str) -> Matches:
    """Where `needle` occurs, in time linear in the text however many matches there are.

    Two overlapping matches already make an edit ambiguous, so uniqueness is checked with
    overlaps; the reported count is of non-overlapping matches (what a reader would count).
    """
    offsets: list[int] = []
    start = text.find(needle)
    while start != -1 and len(offsets) < LISTED_MATCHES:
        offsets.append(start)
        start = text.find(needle, start + 1)
    if len(offsets) < 2:
        return Matches(len(offsets), tuple(offsets))
    return Matches(max(len(offsets), text.count(needle)), tuple(offsets))


def lines_of(text: str, offsets: tuple[int, ...]) -> list[int]:
    """The 1-based line numbers of increasing offsets, counting each stretch once."""
    lines: list[int] = []
    line, position = 1, 0
    for offset in offsets:
        line += text.count("\n", position, offset)
        position = offset
        lines.append(line)
    return lines


def many_matches_message(text: str, old: str, matches: Matches, shown: str) -> str:
    """Why an ambiguous edit was refused: the count, the first lines, two snippets."""
    lines = lines_of(text, matches.offsets)
    listed = ("first at lines {}, …" if matches.count > len(lines) else "at lines {}").format(
        ", ".join(map(str, lines))
    )
    parts = [
        f"old occurs {matches.count:,} times in {shown} ({listed}); nothing was changed. "
        "Include more surrounding lines so that it matches exactly once."
    ]
    old_lines = old.count("\n") + 1
    for line in lines[:2]:
        parts.append(f"At line {line}:\n{snippet_around(text, line, old_lines, context=1)}")
    if matches.count > 2:
        parts.append(f"…and {matches.count - 2:,} more.")
    return "\n".join(parts)


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
    start = max(1, first_line - context)
    end = first_line + max(line_count, 1) - 1 + context
    pieces = text.split("\n", end)  # never splits the whole text: only up to line `end`
    if len(pieces) > end:
        del pieces[end:]
    elif pieces and pieces[-1] == "":
        pieces.pop()
    return numbered([line.rstrip("\r") for line in pieces[start - 1 :]], start)
