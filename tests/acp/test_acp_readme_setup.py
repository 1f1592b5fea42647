"""The README's editor setup, read from the README and started the way each editor starts
an agent: the command looked up on PATH, its args, the editor's environment plus `env`, the
user's gosling config choosing the (fake) model; then initialize, a session, a prompt."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.acp.client import REPO, RecordingClient, agent_env, running_agent, text
from tests.fakes import FakeLLMServer, Turn

README = REPO / "README.md"


def editor_section() -> str:
    readme = README.read_text(encoding="utf-8")
    start = readme.index("## Editors: `gosling acp`")
    return readme[start : readme.index("\n## ", start + 1)]


def json_setups() -> dict[str, dict[str, Any]]:
    """Each JSON snippet's `agent_servers` entry, named after the editor line above it."""
    found: dict[str, dict[str, Any]] = {}
    for match in re.finditer(r"^([^\n]+):\n\n```json\n(.*?)\n```", editor_section(), re.M | re.S):
        editor, block = match.group(1), json.loads(match.group(2))
        found[editor] = block["agent_servers"]["gosling"]
    return found


def lua_setup() -> dict[str, Any]:
    """avante.nvim's `acp_providers["gosling"]` entry, read from the Lua table literal."""
    block = re.search(r"```lua\n(.*?)\n```", editor_section(), re.DOTALL)
    assert block is not None
    entry = re.search(r'\["gosling"\]\s*=\s*\{(.*?)\n\s*\},', block.group(1), re.DOTALL)
    assert entry is not None
    fields: dict[str, Any] = {}
    for key, value in re.findall(r"(\w+)\s*=\s*(\{[^}]*\}|\"[^\"]*\")", entry.group(1)):
        strings = re.findall(r'"([^"]*)"', value)
        fields[key] = strings if value.startswith("{") and key != "env" else strings[0]
    return fields


SETUPS = {**json_setups(), "Neovim with avante.nvim": lua_setup()}


def test_the_readme_shows_each_editor() -> None:
    assert set(SETUPS) == {
        "Zed, in `settings.json`",
        "JetBrains IDEs (AI Assistant), in `~/.jetbrains/acp.json`",
        "Neovim with avante.nvim",
    }
    for setup in SETUPS.values():
        assert setup["command"] == "gosling" and setup["args"] == ["acp"]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("editor", sorted(SETUPS))
async def test_the_editor_setup_starts_gosling(editor: str, tmp_path: Path) -> None:
    setup = SETUPS[editor]
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    bin_dir = str(Path(sys.executable).parent)  # where the install put `gosling`
    path = os.pathsep.join([bin_dir, os.environ.get("PATH", "")])
    command = shutil.which(setup["command"], path=path)
    assert command is not None, f"{setup['command']} is not on PATH"
    with FakeLLMServer() as server:
        server.add(Turn(text=f"Hello from gosling in {editor.split(',')[0]}."))
        config = home / "config" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(
            f'provider = "anthropic"\nmodel = "claude-sonnet-4-5"\nbase_url = "{server.url}"\n'
        )
        env = {**agent_env(home, PATH=path), **setup.get("env", {})}
        env.pop("PYTHONPATH")
        client = RecordingClient()
        async with running_agent(client, setup["args"], env, command=command) as (conn, init, _):
            assert init.agent_info is not None and init.agent_info.name == "gosling"
            new = await conn.new_session(cwd=str(project), mcp_servers=[])
            done = await conn.prompt(session_id=new.session_id, prompt=text("hello"))
        assert done.stop_reason == "end_turn"
        assert client.agent_text(new.session_id).startswith("Hello from gosling")
