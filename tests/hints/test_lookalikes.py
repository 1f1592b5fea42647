"""`gosling hints` names other agents' hint files it did not load, and how to load them."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from click.testing import CliRunner

from gosling.agent.cli.main import cli
from gosling.hints import collect_hints
from tests.hints.trees import write


def test_claude_md_and_cursorrules_are_named_with_the_setting_that_loads_them(
    repo: Path,
) -> None:
    write(repo / "AGENTS.md", "agents")
    write(repo / "CLAUDE.md", "claude rules")
    write(repo / "app" / ".cursorrules", "cursor rules")
    result = CliRunner().invoke(cli, ["hints", str(repo / "app")])
    assert result.exit_code == 0, result.output
    out = result.output.split("not loaded (written for other agents):\n", 1)[1]
    assert str(repo.resolve() / "CLAUDE.md") in out
    assert str(repo.resolve() / "app" / ".cursorrules") in out
    setting = out.split("set in config.toml: ", 1)[1].strip()
    names = tomllib.loads(setting)["context_file_names"]
    assert {"CLAUDE.md", ".cursorrules", "AGENTS.md"} <= set(names)
    loaded = collect_hints(repo / "app", names).text
    assert "claude rules" in loaded and "cursor rules" in loaded


def test_nothing_is_named_when_the_configured_names_load_them(repo: Path) -> None:
    write(repo / "CLAUDE.md", "claude rules")
    write(repo / ".gosling" / "config.toml", 'context_file_names = ["CLAUDE.md"]\n')
    result = CliRunner().invoke(cli, ["hints", str(repo), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["skipped_other_agents"] == []
