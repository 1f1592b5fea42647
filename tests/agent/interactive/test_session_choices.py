"""Leaving, `/model`, `/compact` and resuming as a user meets them (issue 19's interactive
items), driven through the pipe harness against the loopback fake server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.agent.interactive.driver import interactive, session_options
from tests.agent.interactive.test_session_flow import SUMMARY_TEXT
from tests.fakes import FakeLLMServer, FakeUsage, Turn


@pytest.mark.parametrize("word", ["quit", "exit", "Quit"])
async def test_typing_quit_alone_leaves_without_asking_the_model(
    repo: Path, server: FakeLLMServer, tmp_path: Path, word: str
) -> None:
    async with interactive(session_options(server, repo), tmp_path / "history") as user:
        user.type("/help")
        shown = await user.expect("/exit, /quit")
        assert "quit" in shown.split("/exit, /quit")[-1] or "/quit" in shown
        server.add(Turn(text="Quitting smoking is hard."))
        user.type("how do I quit smoking")  # a sentence still goes to the model
        await user.expect("Quitting smoking is hard.")
        user.type(word)
        assert await user.exit_code() == 0
    assert len(server.model_requests()) == 1
    server.assert_complete()


async def test_model_of_another_vendor_is_refused_and_nothing_changes(
    repo: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    async with interactive(session_options(server, repo), tmp_path / "history") as user:
        user.type("/model gpt-5")
        refused = await user.expect("--provider openai --model gpt-5")
        assert "error: cannot switch to gpt-5: anthropic serves claude-* models" in refused
        server.add(Turn(text="Still the same model."))
        user.type("who are you?")
        await user.expect("Still the same model.")
        assert server.model_requests()[-1].body["model"] == "test-model"
        user.type("/exit")
        assert await user.exit_code() == 0


async def test_compact_forecast_never_keeps_more_than_there_is_and_reports_once(
    repo: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    async with interactive(session_options(server, repo), tmp_path / "history") as user:
        server.add(Turn(text="Hi."))
        user.type("hello")
        await user.expect("Hi.")
        user.type("/context")
        small = await user.expect("/compact")
        small += await user.expect("\n")
        assert "would not make the context smaller" in small

        server.add(Turn(text="Read.", usage=FakeUsage(8_000, 5)))
        notes = " ".join(f"note{i} about the design" for i in range(600))
        user.keys("\x1b[200~notes: " + notes + "\x1b[201~\r")  # pasted, as long text is
        await user.expect("Read.")
        user.type("/context")
        report = await user.expect("tokens (system prompt")
        current = int(re.search(r"Context: ~([\d,]+) of", report)[1].replace(",", ""))  # type: ignore[index]
        kept = re.search(r"keep ~([\d,]+) of ~([\d,]+) tokens", report)
        assert kept is not None
        assert int(kept[2].replace(",", "")) == current
        assert int(kept[1].replace(",", "")) < current

        server.add(Turn(text=SUMMARY_TEXT))
        user.type("/compact")
        await user.expect("Compaction complete")
        user.type("/exit")
        assert await user.exit_code() == 0
    screen = user.screen.text
    assert screen.count("Compaction complete") == 1
    assert "compacted:" not in screen


async def test_resume_keeps_the_model_and_mode_chosen_in_the_session(
    repo: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    history = tmp_path / "history"
    async with interactive(session_options(server, repo, mode="auto"), history) as user:
        user.type("/model claude-other")
        await user.expect("model: anthropic/claude-other")
        user.type("/mode chat")
        await user.expect("mode: chat")
        server.add(Turn(text="Noted."))
        user.type("remember this")
        await user.expect("Noted.")
        user.type("/exit")
        assert await user.exit_code() == 0

    resumed = session_options(server, repo, resume="")
    del resumed.flags["model"]  # no --model: the session's own choice comes back
    async with interactive(resumed, history) as user:
        banner = await user.expect("Ctrl-D: quit")
        assert "anthropic/claude-other · mode chat" in banner
        await user.expect("claude-other · chat", on=user.prompt)
        server.add(Turn(text="Back."))
        user.type("and now?")
        await user.expect("Back.")
        assert server.model_requests()[-1].body["model"] == "claude-other"
        assert server.model_requests()[-1].body.get("tools") in (None, [])  # chat mode
        user.type("/exit")
        assert await user.exit_code() == 0

    # Flags given on the command line win over the stored choices.
    pinned = session_options(server, repo, resume="", mode="auto")
    async with interactive(pinned, history) as user:
        banner = await user.expect("Ctrl-D: quit")
        assert "anthropic/test-model · mode auto" in banner
        user.type("/exit")
        assert await user.exit_code() == 0
