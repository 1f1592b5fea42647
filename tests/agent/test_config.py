"""Settings layers: flags > env > project config > user config > defaults, with sources."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gosling.agent.cli.main import cli
from gosling.agent.config import ConfigError, load_settings
from gosling.prompts.locations import user_dirs


def write_user_config(text: str) -> Path:
    path = user_dirs().config / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def make_project(tmp_path: Path, text: str) -> Path:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".gosling").mkdir()
    (project / ".gosling" / "config.toml").write_text(text)
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    return deep


def test_defaults(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path, environ={})
    assert loaded.settings.auto_compact_threshold == 0.8
    assert loaded.settings.context_file_names == [".goosehints", "AGENTS.md"]
    assert set(loaded.sources.values()) == {"default"}


def test_precedence_of_every_layer(tmp_path: Path) -> None:
    user_file = write_user_config(
        'model = "user-model"\nmax_turns = 5\nmode = "approve"\nshell_timeout = 9\n'
    )
    deep = make_project(tmp_path, 'model = "project-model"\nmax_turns = 6\nmode = "chat"\n')
    env = {"GOSLING_MAX_TURNS": "7", "GOSLING_MODE": "smart_approve"}
    loaded = load_settings(
        deep, environ=env, flags={"mode": "auto", "model": None}, trust_project=True
    )
    s = loaded.settings
    assert (s.shell_timeout, s.model, s.max_turns, s.mode) == (9, "project-model", 7, "auto")
    assert loaded.sources["shell_timeout"] == str(user_file)
    assert loaded.sources["model"].endswith(".gosling/config.toml")
    assert loaded.sources["max_turns"] == "env GOSLING_MAX_TURNS"
    assert loaded.sources["mode"] == "flag --mode"


def test_project_config_is_not_looked_for_above_the_git_root(tmp_path: Path) -> None:
    (tmp_path / ".gosling").mkdir()
    (tmp_path / ".gosling" / "config.toml").write_text('model = "outer"\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    assert load_settings(repo, environ={}).settings.model is None


def test_env_lists_accept_json_or_commas(tmp_path: Path) -> None:
    env = {"GOSLING_CONTEXT_FILE_NAMES": '["CLAUDE.md"]'}
    assert load_settings(tmp_path, environ=env).settings.context_file_names == ["CLAUDE.md"]
    env = {"GOSLING_CONTEXT_FILE_NAMES": "A.md, B.md"}
    assert load_settings(tmp_path, environ=env).settings.context_file_names == ["A.md", "B.md"]


def test_malformed_file_names_file_and_line(tmp_path: Path) -> None:
    path = write_user_config('model = "x"\nmax_turns = = 3\n')
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, environ={})
    assert str(path) in str(info.value)
    assert "line 2" in str(info.value)


def test_unknown_key_suggests_the_right_one(tmp_path: Path) -> None:
    write_user_config("auto_compact_treshold = 0.5\n")
    with pytest.raises(ConfigError, match="did you mean 'auto_compact_threshold'"):
        load_settings(tmp_path, environ={})


def test_bad_value_names_its_source(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="env GOSLING_MAX_TURNS: invalid value for 'max_turns'"):
        load_settings(tmp_path, environ={"GOSLING_MAX_TURNS": "many"})


def test_config_show_prints_values_and_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_user_config("auto_compact_threshold = 0.7\n")
    monkeypatch.setenv("GOSLING_MAX_TURNS", "12")
    result = CliRunner().invoke(cli, ["config", "show", "--dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line for line in result.output.splitlines() if line.strip()}
    assert (
        "0.7" in lines["auto_compact_threshold"]
        and "config.toml" in lines["auto_compact_threshold"]
    )
    assert "12" in lines["max_turns"] and "env GOSLING_MAX_TURNS" in lines["max_turns"]
    assert "[default]" in lines["mode"]


def test_config_show_reports_a_broken_file(tmp_path: Path) -> None:
    write_user_config("mode = [\n")
    result = CliRunner().invoke(cli, ["config", "show", "--dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "error:" in result.output and "malformed TOML" in result.output
