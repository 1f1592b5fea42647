"""Capped capture of a process's output stream, spilling the full text to a temp file.

A command can print gigabytes; the model gets at most `max_lines` lines and `max_bytes`
bytes of each stream (the tail, where errors and summaries usually are) and the path of a
file holding everything. Memory stays bounded: once over the cap, chunks go to the file and
only a rolling tail stays in memory.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

_CHUNK = 64 * 1024


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
        self._spill: BinaryIO | None = None
        self._spill_path: Path | None = None

    async def read_all(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            self.feed(chunk)

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
            del self._buffer[: len(self._buffer) - self.max_bytes * 2]

    def _over_cap(self) -> bool:
        return self._total_bytes > self.max_bytes or self._newlines > self.max_lines

    def _open_spill(self) -> None:
        if self.spill_dir is not None:
            self.spill_dir.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(
            prefix=f"gosling-{self.label}-", suffix=".txt", dir=self.spill_dir
        )
        self._spill = os.fdopen(fd, "wb")
        self._spill_path = Path(name)
        self._spill.write(self._buffer)

    def result(self) -> CapturedOutput:
        total_lines = self._newlines + (
            1 if self._buffer and not self._buffer.endswith(b"\n") else 0
        )
        if self._spill is None:
            return CapturedOutput(self._decode(self._buffer), self._total_bytes, total_lines, None)
        self._spill.close()
        tail = tail_within(self._decode(self._buffer), self.max_lines, self.max_bytes)
        return CapturedOutput(tail, self._total_bytes, total_lines, self._spill_path)

    @staticmethod
    def _decode(data: bytes | bytearray) -> str:
        return bytes(data).decode("utf-8", errors="replace")


def tail_within(text: str, max_lines: int, max_bytes: int) -> str:
    """The last lines of `text` that fit in both caps (a partial first line is dropped)."""
    lines = text.splitlines()[-max_lines:]
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        size += len(line.encode("utf-8", errors="replace")) + 1
        if size > max_bytes:
            break
        kept.append(line)
    return "\n".join(reversed(kept))
