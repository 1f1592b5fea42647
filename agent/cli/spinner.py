"""A small spinner on stderr while waiting for the model; silent when stderr is not a TTY."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from typing import IO

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class Spinner:
    def __init__(self, stream: IO[str], label: str = "working", interval: float = 0.1) -> None:
        self.stream = stream
        self.label = label
        self.interval = interval
        self.enabled = (
            stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        )
        self._task: asyncio.Task[None] | None = None

    def start(self, label: str | None = None) -> None:
        """Spin (again) with `label`; a spinner already running only takes the new label."""
        if label is not None:
            self.label = label
        if self.enabled and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._spin())

    def stop(self) -> None:
        """Stop and clear the line, so whatever is written next starts at column 0."""
        if self._task is not None:
            self._task.cancel()
            self._task = None
            self.stream.write("\r\x1b[2K")
            self.stream.flush()

    async def _spin(self) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            for frame in itertools.cycle(FRAMES):
                self.stream.write(f"\r{frame} {self.label}…")
                self.stream.flush()
                await asyncio.sleep(self.interval)
