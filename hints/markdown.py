"""Where Markdown code lives, so that `@name` inside code is never read as an import.

Covers fenced blocks (``` or ~~~, closed by a fence of the same character at least as long,
or running to the end of the file) and inline code spans (a run of N backticks closed by the
next run of exactly N within the same paragraph).
"""

from __future__ import annotations

import bisect
import re
import sys

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def code_regions(text: str) -> list[tuple[int, int]]:
    """Sorted, non-overlapping `(start, end)` character ranges covered by code."""
    regions: list[tuple[int, int]] = []
    prose_start = 0
    fence: str | None = None
    fence_start = 0
    offset = 0
    for line in text.splitlines(keepends=True):
        if fence is None:
            match = _FENCE_OPEN.match(line)
            if match and not (match.group(1)[0] == "`" and "`" in line[match.end() :]):
                regions.extend(_inline_spans(text, prose_start, offset))
                fence, fence_start = match.group(1), offset
        elif _closes(line, fence):
            regions.append((fence_start, offset + len(line)))
            fence, prose_start = None, offset + len(line)
        offset += len(line)
    if fence is None:
        regions.extend(_inline_spans(text, prose_start, len(text)))
    else:
        regions.append((fence_start, len(text)))
    return regions


def inside(regions: list[tuple[int, int]], position: int) -> bool:
    """Whether `position` falls in one of `regions` (as returned by `code_regions`)."""
    index = bisect.bisect_right(regions, (position, sys.maxsize)) - 1
    return index >= 0 and regions[index][0] <= position < regions[index][1]


def _closes(line: str, fence: str) -> bool:
    stripped = line.rstrip("\r\n")
    body = stripped.lstrip(" ")
    if len(stripped) - len(body) > 3:
        return False
    run = len(body) - len(body.lstrip(fence[0]))
    return run >= len(fence) and not body[run:].strip()


def _inline_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    paragraph_start = start
    for blank in [*_BLANK_LINE.finditer(text, start, end), None]:
        paragraph_end = end if blank is None else blank.start()
        spans.extend(_spans_in(text, paragraph_start, paragraph_end))
        if blank is not None:
            paragraph_start = blank.end()
    return spans


def _spans_in(text: str, start: int, end: int) -> list[tuple[int, int]]:
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text, start, end)]
    by_width: dict[int, list[int]] = {}
    for index, (run_start, run_end) in enumerate(runs):
        by_width.setdefault(run_end - run_start, []).append(index)
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        opener_start, opener_end = runs[index]
        same = by_width[opener_end - opener_start]
        after = bisect.bisect_right(same, index)
        if after == len(same):
            index += 1
            continue
        closer = same[after]
        spans.append((opener_start, runs[closer][1]))
        index = closer + 1
    return spans
