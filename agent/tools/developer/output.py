"""Capped capture of a process's output stream, spilling the full text to a spill file.

A command can print gigabytes; the model gets at most `max_lines` lines and `max_bytes`
bytes of each stream (the tail, where errors and summaries usually are) and the path of a
file holding everything, redacted (`agent.tools.spill`). Memory stays bounded: once over
the cap, chunks go to the file and only a rolling tail stays in memory, plus the head of the
line that tail starts in, so that one enormous line is shown as its head and tail with its
length, never as nothing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from gosling.agent.tools.spill import SpillFile, open_spill_file, spill_dir_for

_CHUNK = 64 * 1024
MIN_CUT_BYTES = 512
"""A line that does not fit is still shown cut when at least this much room is left."""


def create_spill_file(
    label: str, spill_dir: Path | None, suffix: str = ".txt"
) -> tuple[SpillFile, Path]:
    """A new file, readable only by us, for output that went over the caps: in the session's
    spill directory when `spill_dir` is None, redacted unless it holds binary data."""
    directory = spill_dir if spill_dir is not None else spill_dir_for(None)
    spill = open_spill_file(directory, label, suffix, redact_text=suffix == ".txt")
    return spill, spill.path


@dataclass(frozen=True)
class LinePart:
    """What is known of a line whose middle is gone: its start and its length in bytes."""

    head: str
    length: int


@dataclass(frozen=True)
class CapturedOutput:
    text: str
    """What the model sees: everything, or the tail when the stream was over the cap."""
    total_bytes: int
    total_lines: int
    spill_path: Path | None
    """The file with the complete output, when `text` is only the tail."""

    @property
    def truncated(self) -> bool:
        return self.spill_path is not None


class StreamCapture:
    """Reads one stream to its end, keeping it in memory until it grows past the caps."""

    def __init__(self, label: str, *, max_lines: int, max_bytes: int, spill_dir: Path | None):
        self.label = label
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.spill_dir = spill_dir
        self._buffer = bytearray()
        self._total_bytes = 0
        self._newlines = 0
        self._spill: SpillFile | None = None
        self._spill_path: Path | None = None
        self._buffer_start = 0
        """Offset in the stream of the buffer's first byte (the buffer is a rolling tail)."""
        self._line_start = 0
        """Offset of the start of the line the buffer begins in."""
        self._line_head = bytearray()
        """The first bytes of that line (up to half the byte cap), kept when the buffer drops
        its start: a line too long to show whole is shown as its head and tail."""

    async def read_all(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            if self._spill is None:
                self.feed(chunk)
            else:  # writing to the spill file is disk I/O: keep it off the event loop
                await asyncio.to_thread(self.feed, chunk)

    def feed(self, chunk: bytes) -> None:
        self._total_bytes += len(chunk)
        self._newlines += chunk.count(b"\n")
        self._buffer += chunk
        if self._spill is None:
            if not self._over_cap():
                return
            self._open_spill()  # writes the buffer, which includes this chunk
        else:
            self._spill.write(chunk)
        if len(self._buffer) > self.max_bytes * 4:
            self._drop_front(len(self._buffer) - self.max_bytes * 2)

    def _drop_front(self, count: int) -> None:
        """Forget the first `count` buffered bytes, keeping the head of the line cut there."""
        newline = self._buffer.rfind(b"\n", 0, count)
        if newline != -1:
            self._line_start = self._buffer_start + newline + 1
            self._line_head = self._buffer[newline + 1 : newline + 1 + self.max_bytes // 2]
        elif self._line_start == self._buffer_start:
            self._line_head = self._buffer[: self.max_bytes // 2]
        del self._buffer[:count]
        self._buffer_start += count

    def _over_cap(self) -> bool:
        return self._total_bytes > self.max_bytes or self._newlines > self.max_lines

    def _open_spill(self) -> None:
        self._spill, self._spill_path = create_spill_file(self.label, self.spill_dir)
        self._spill.write(bytes(self._buffer))

    def _first_line(self) -> LinePart | None:
        """The line the buffer starts in, when its start is no longer buffered."""
        if self._line_start == self._buffer_start:
            return None
        newline = self._buffer.find(b"\n")
        end = self._buffer_start + (newline if newline != -1 else len(self._buffer))
        return LinePart(self._decode(self._line_head), end - self._line_start)

    def result(self) -> CapturedOutput:
        total_lines = self._newlines + (
            1 if self._buffer and not self._buffer.endswith(b"\n") else 0
        )
        if self._spill is None:
            return CapturedOutput(self._decode(self._buffer), self._total_bytes, total_lines, None)
        self._spill.close()
        missing = self._buffer_start - self._line_start
        if 0 < missing <= len(self._line_head):  # the whole first line is still known
            self._buffer[:0] = self._line_head[:missing]
            self._buffer_start = self._line_start
        tail = tail_within(
            self._decode(self._buffer), self.max_lines, self.max_bytes, cut_first=self._first_line()
        )
        return CapturedOutput(tail, self._total_bytes, total_lines, self._spill_path)

    @staticmethod
    def _decode(data: bytes | bytearray) -> str:
        return bytes(data).decode("utf-8", errors="replace")


def tail_within(
    text: str, max_lines: int, max_bytes: int, *, cut_first: LinePart | None = None
) -> str:
    """The last lines of `text` that fit in both caps. A line too long for the room left is
    shown cut (its head and tail around its length) rather than dropped; `cut_first` says
    that the first line of `text` is only the end of a longer line."""
    lines = text.split("\n")  # only newlines end lines, as in the line counts
    if lines[-1] == "":
        lines.pop()
    kept: list[str] = []
    room = max_bytes
    for index in range(len(lines) - 1, max(-1, len(lines) - 1 - max_lines), -1):
        line = lines[index].removesuffix("\r")
        partial = cut_first if index == 0 else None
        size = _size(line, room) + 1
        if partial is None and size <= room:
            kept.append(line)
            room -= size
            continue
        if not kept or room >= MIN_CUT_BYTES:
            kept.append(cut_line(line, room - 1, partial))
        break
    return "\n".join(reversed(kept))


def head_within(text: str, max_lines: int, max_bytes: int) -> str:
    """The first lines of `text` that fit in both caps; a line too long for the room left is
    shown cut, like `tail_within` does. Never splits more of `text` than it keeps."""
    kept: list[str] = []
    room = max_bytes
    position = 0
    while position < len(text) and len(kept) < max_lines:
        end = text.find("\n", position)
        line = text[position : end if end != -1 else len(text)]
        size = _size(line, room) + 1
        if size <= room:
            kept.append(line.rstrip("\r"))
            room -= size
        else:
            if not kept or room >= MIN_CUT_BYTES:
                kept.append(cut_line(line, room - 1))
            break
        if end == -1:
            break
        position = end + 1
    return "\n".join(kept)


def cut_line(line: str, room: int, partial: LinePart | None = None) -> str:
    """`line` in at most about `room` bytes: its head and its tail around a note with its
    length. With `partial`, `line` is only the end of the line and `partial` knows the rest."""
    length = partial.length if partial else len(line.encode("utf-8", errors="replace"))
    note = f" … [line cut: {length:,} bytes in all] … "
    half = max(0, room - len(note.encode())) // 2
    head = partial.head if partial else line
    return f"{_bytes_prefix(head, half)}{note}{_bytes_suffix(line, half)}"


def _size(line: str, room: int) -> int:
    """The UTF-8 size of `line`, or just a number over `room` when it clearly is."""
    if len(line) > room:
        return len(line)
    return len(line.encode("utf-8", errors="replace"))


def _bytes_prefix(text: str, count: int) -> str:
    data = text[:count].encode("utf-8", errors="replace")[:count]
    return data.decode("utf-8", errors="ignore")


def _bytes_suffix(text: str, count: int) -> str:
    if count <= 0:
        return ""
    data = text[-count:].encode("utf-8", errors="replace")[-count:]
    return data.decode("utf-8", errors="ignore")
