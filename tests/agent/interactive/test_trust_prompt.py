"""`gosling session` in a checkout whose project config only trust would apply: asked once."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gosling.agent.trust import TrustStore, project_files
from tests.agent.interactive.driver import CTRL_D, interactive, session_options
from tests.fakes import FakeLLMServer, Turn


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("GOSLING_MAX_RETRIES", "0")
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    work = tmp_path / "checkout"
    (work / ".git").mkdir(parents=True)
    (work / ".gosling").mkdir()
    (work / ".gosling" / "config.toml").write_text('mode = "auto"\nmask_keep_last = 2\n')
    return work


def trusted(checkout: Path) -> bool:
    return TrustStore.default().is_trusted(checkout, project_files(checkout))


@pytest.mark.parametrize(("key", "applies"), [("y", True), ("n", False), ("\r", False)])
async def test_the_session_asks_once_and_only_yes_trusts(
    checkout: Path, server: FakeLLMServer, tmp_path: Path, key: str, applies: bool
) -> None:
    user_config = Path(os.environ["GOSLING_HOME"]) / "config" / "config.toml"
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text('mode = "approve"\n')
    options = session_options(server, checkout)
    async with interactive(options, tmp_path / "history") as user:
        await user.expect("Trust this folder? [y/N]", on=user.prompt)
        shown = await user.expect("would also apply:")
        assert str(checkout / ".gosling" / "config.toml") in shown
        user.keys(key)
        if applies:
            await user.expect(f"trusted {checkout}")
            await user.expect("mode auto")
        else:
            warning = await user.expect(f"gosling trust {checkout}")
            assert "ignored mode" in warning
            await user.expect("mode approve")
        server.add(Turn(text="hello"))
        user.type("hi")
        await user.expect("hello")
        user.keys(CTRL_D)
        assert await user.exit_code() == 0
    assert trusted(checkout) is applies
    assert 'mode = "auto"' in user.screen.text  # the question showed what trust changes


async def test_a_trusted_or_harmless_project_config_asks_nothing(
    checkout: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    (checkout / ".gosling" / "config.toml").write_text("mask_keep_last = 2\n")
    async with interactive(session_options(server, checkout), tmp_path / "history") as user:
        await user.expect("mode auto")
        user.keys(CTRL_D)
        assert await user.exit_code() == 0
    assert "Trust this folder?" not in user.prompt.text + user.screen.text
