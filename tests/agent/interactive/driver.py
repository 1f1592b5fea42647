"""Drive `gosling session` in-process: keys through a prompt_toolkit pipe, output captured.

The session talks to the loopback fake LLM server through the real Anthropic SDK. Tests wait
on what the user would see (text on the captured screen), never on time.
"""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from gosling.agent.cli.interactive.terminal import Terminal
from gosling.agent.cli.session_cmd import SessionOptions, run_session
from tests.fakes import FakeLLMServer

WAIT_SECONDS = 60.0  # a bound for a loaded machine; expect returns as soon as the text shows
ENTER = "\r"
CTRL_D = "\x04"


class Screen(io.StringIO):
    """Captured output that tests can wait on (written from the app's thread only)."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self.mark = 0
        """Where the next `expect` starts looking."""

    def write(self, text: str) -> int:
        with self._lock:
            return super().write(text)

    def isatty(self) -> bool:
        return False

    @property
    def text(self) -> str:
        with self._lock:
            return self.getvalue()

    async def expect(self, needle: str, *, ended: Callable[[], bool] = bool) -> str:
        """Wait until `needle` appears after the mark; returns the text up to it and moves
        the mark past it. Gives up early once `ended()` says nothing more will be written."""
        try:
            async with asyncio.timeout(WAIT_SECONDS):
                while True:
                    over = ended()
                    text = self.text
                    found = text.find(needle, self.mark)
                    if found >= 0:
                        seen = text[self.mark : found + len(needle)]
                        self.mark = found + len(needle)
                        return seen
                    if over:
                        break
                    await asyncio.sleep(0.005)
        except TimeoutError:
            pass
        raise AssertionError(f"{needle!r} not shown; screen after mark:\n{self.text[self.mark :]}")


class PromptOutput(Vt100_Output):
    """The prompt's own output (input line, bottom toolbar) as escape sequences, with a
    known height so prompt_toolkit draws the toolbar without asking the terminal."""

    def get_rows_below_cursor_position(self) -> int:
        return 20


class Driver:
    def __init__(
        self, pipe: PipeInput, screen: Screen, prompt: Screen, task: asyncio.Task[int]
    ) -> None:
        self.pipe = pipe
        self.screen = screen
        self.prompt = prompt
        """What prompt_toolkit drew: the typed lines and the status toolbar."""
        self.task = task

    def type(self, text: str) -> None:
        """Type a line and press Enter."""
        self.pipe.send_text(text + ENTER)

    def keys(self, keys: str) -> None:
        self.pipe.send_text(keys)

    async def expect(self, needle: str, *, on: Screen | None = None) -> str:
        try:
            return await (on or self.screen).expect(needle, ended=self.task.done)
        except AssertionError:
            if self.task.done() and not self.task.cancelled():
                self.task.result()  # an exception in the app is the real failure
            raise

    async def exit_code(self) -> int:
        return await asyncio.wait_for(self.task, WAIT_SECONDS)


def session_options(server: FakeLLMServer, repo: Path, **flags: Any) -> SessionOptions:
    resume = flags.pop("resume", None)
    name = flags.pop("name", "")
    return SessionOptions(
        flags={
            "provider": "anthropic",
            "model": "test-model",
            "base_url": server.url,
            **flags,
        },
        resume=resume,
        name=name,
        working_dir=repo,
    )


@asynccontextmanager
async def interactive(options: SessionOptions, history: Path) -> AsyncIterator[Driver]:
    with create_pipe_input() as pipe:
        screen, prompt = Screen(), Screen()
        output = PromptOutput(prompt, lambda: Size(rows=24, columns=120), term="xterm")
        terminal = Terminal(screen, styled=False, width=100, pt_input=pipe, pt_output=output)
        task = asyncio.create_task(run_session(options, terminal, history_file=history))
        driver = Driver(pipe, screen, prompt, task)
        try:
            yield driver
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait([task])
