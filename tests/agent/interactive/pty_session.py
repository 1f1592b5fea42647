"""Run `gosling` on a pseudo-terminal, as a user at a real terminal would.

Keys go in as bytes (Ctrl-C is `\\x03`, which the terminal turns into SIGINT while a turn
runs); output is read as it comes and matched with escape sequences removed.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import sys
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.fakes import FakeLLMServer

ANSI = re.compile(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-Za-z]|[=>78])")
ROWS, COLUMNS = 30, 100


def gosling_env(server: FakeLLMServer, **extra: str) -> dict[str, str]:
    """A terminal environment pointing gosling at the fake server (no flags needed)."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("NO_COLOR", None)
    env.update(
        {
            "ANTHROPIC_API_KEY": "test",
            "GOSLING_PROVIDER": "anthropic",
            "GOSLING_MODEL": "test-model",
            "GOSLING_BASE_URL": server.url,
            "GOSLING_MAX_RETRIES": "0",
            "TERM": "xterm-256color",
            "COLUMNS": str(COLUMNS),
            "LINES": str(ROWS),
            "PROMPT_TOOLKIT_NO_CPR": "1",
        }
    )
    env.update(extra)
    return env


class PtySession:
    def __init__(
        self, args: Sequence[str], cwd: Path, env: Mapping[str, str], *, columns: int = COLUMNS
    ) -> None:
        """`columns`: the terminal's width (the COLUMNS variable follows it)."""
        env = {**env, "COLUMNS": str(columns)}
        pid, fd = pty.fork()
        if pid == 0:  # the child: becomes gosling on the terminal
            try:
                os.chdir(cwd)
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, columns, 0, 0))
                os.execve(sys.executable, [sys.executable, "-m", "gosling", *args], dict(env))
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.raw = b""
        self.mark = 0
        self.exit_status: int | None = None

    @property
    def text(self) -> str:
        return ANSI.sub("", self.raw.decode("utf-8", errors="replace")).replace("\r", "")

    def send(self, data: str) -> None:
        os.write(self.fd, data.encode())

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # the child closed the terminal
            return False
        self.raw += chunk
        return bool(chunk)

    def expect(self, needle: str, timeout: float = 15.0) -> str:
        """Read until `needle` shows after the mark; returns what was shown up to it."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.text
            found = text.find(needle, self.mark)
            if found >= 0:
                seen = text[self.mark : found + len(needle)]
                self.mark = found + len(needle)
                return seen
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._read(min(remaining, 0.5)):
                raise AssertionError(
                    f"{needle!r} not shown; output after mark:\n{text[self.mark :]}"
                )

    def wait(self, timeout: float = 15.0) -> int:
        """Drain the output until the process exits; returns its exit code."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                while self._read(0.05):
                    pass
                self.exit_status = os.waitstatus_to_exitcode(status)
                return self.exit_status
            self._read(0.1)
        raise AssertionError(f"gosling did not exit; output:\n{self.text}")

    def close(self) -> None:
        if self.exit_status is None:
            try:
                os.kill(self.pid, 9)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        os.close(self.fd)
