"""The spinner draws on a terminal only, and clears its line when it stops."""

from __future__ import annotations

import asyncio
import io

import pytest

from gosling.agent.cli.spinner import Spinner


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


async def test_silent_when_not_a_terminal() -> None:
    stream = io.StringIO()
    spinner = Spinner(stream)
    spinner.start()
    await asyncio.sleep(0)
    spinner.stop()
    assert stream.getvalue() == ""


async def test_draws_on_a_terminal_and_clears_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm")
    stream = Tty()
    spinner = Spinner(stream, label="working")
    spinner.start()

    async def first_frame() -> None:
        while "working" not in stream.getvalue():  # noqa: ASYNC110 (polls the fake terminal)
            await asyncio.sleep(0)

    await asyncio.wait_for(first_frame(), timeout=10)  # a spinner that never draws fails
    spinner.stop()
    assert stream.getvalue().endswith("\r\x1b[2K")


async def test_no_colour_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert not Spinner(Tty()).enabled
