"""Markdown that renders as it streams, without flicker and without redrawing the past.

Re-rendering a whole growing reply on every delta is slow and makes long answers jump. Instead
the text is cut into finished blocks (paragraphs, lists, closed code fences) and the block still
being written. A finished block is rendered once and printed for good; only the open block is
redrawn, in a small live region at the bottom. When the open block alone outgrows that region
(a long code listing), its top lines are printed for good as well, so the live region never
grows past `window` lines.

`MarkdownStream` is generic over the rendered line type, so the cutting logic is tested with
plain strings while the terminal uses rich's rendered segments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

L = TypeVar("L")

_FENCES = ("```", "~~~")


def stable_prefix(text: str) -> int:
    """Length of the longest prefix of `text` made of finished markdown blocks.

    A block is finished once a blank line (outside a code fence) or a closing fence is
    followed by the start of a new, unindented line: only then is it certain that nothing
    later continues it (an indented line may still belong to a list item).
    """
    stable = 0
    fence: str | None = None
    after_break = False
    position = 0
    for line in text.splitlines(keepends=True):
        start = position
        position += len(line)
        stripped = line.strip()
        if after_break and stripped and not line[0].isspace() and fence is None:
            stable = start
        after_break = False
        if not line.endswith("\n"):
            break
        marker = next((f for f in _FENCES if line.lstrip().startswith(f)), None)
        if fence is None and marker is not None:
            fence = marker
        elif fence is not None and stripped.startswith(fence) and stripped.strip(fence[0]) == "":
            fence = None
            after_break = True
        elif fence is None and not stripped:
            after_break = True
    return stable


class MarkdownStream(Generic[L]):
    """Feeds text in, hands out rendered lines to print for good, keeps the live tail."""

    def __init__(
        self,
        render: Callable[[str], list[L]],
        *,
        window: int,
        blank: L,
        is_blank: Callable[[L], bool],
    ) -> None:
        self._render = render
        self._window = max(window, 1)
        self._blank = blank
        self._is_blank = is_blank
        self._text = ""
        self._start = 0
        """Where the open block starts in `_text`."""
        self._emitted = 0
        """Lines of the open block already printed for good (it outgrew the window)."""
        self._blocks = 0
        """Blocks printed so far; every block after the first gets a blank line before it."""
        self.live: list[L] = []

    @property
    def text(self) -> str:
        return self._text

    def feed(self, delta: str) -> None:
        self._text += delta

    def refresh(self) -> list[L]:
        """Lines to print for good now; `live` is updated to the open block's tail."""
        out: list[L] = []
        region = self._text[self._start :]
        stable = stable_prefix(region)
        if stable:
            done = self._lines(region[:stable])
            out += self._take(done, len(done))
            self._start += stable
            self._emitted = 0
            self._blocks += 1
            region = region[stable:]
        lines = self._lines(region)
        overflow = len(lines) - self._window
        if overflow > self._emitted:
            out += self._take(lines, overflow)
        self.live = self._with_separator(lines[self._emitted :])
        return out

    def finish(self) -> list[L]:
        """Everything not printed yet; the stream is empty afterwards."""
        lines = self._lines(self._text[self._start :])
        out = self._take(lines, len(lines))
        self._text, self._start, self._emitted, self._blocks = "", 0, 0, 0
        self.live = []
        return out

    def _take(self, lines: list[L], upto: int) -> list[L]:
        """Print `lines[emitted:upto]` for good (with the block separator when due)."""
        chunk = lines[self._emitted : upto]
        if not chunk:
            return []
        chunk = self._with_separator(chunk)
        self._emitted = upto
        return chunk

    def _with_separator(self, chunk: list[L]) -> list[L]:
        if chunk and self._emitted == 0 and self._blocks > 0:
            return [self._blank, *chunk]
        return chunk

    def _lines(self, text: str) -> list[L]:
        if not text.strip():
            return []
        lines = self._render(text)
        while lines and self._is_blank(lines[0]):
            lines.pop(0)
        while lines and self._is_blank(lines[-1]):
            lines.pop()
        return lines
