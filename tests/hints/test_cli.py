"""`gosling hints [DIR]`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gosling.agent.cli.main import cli
from tests.hints.trees import write


@pytest.fixture
def project(repo: Path) -> Path:
    write(repo / "AGENTS.md", "Root rules. Read @docs/style.md and @/etc/hostname too")
    write(repo / "docs" / "style.md", "STYLE")
    write(repo / "app" / ".goosehints", "app hints")
    return repo


def test_prints_files_sizes_imports_refusals_and_budget(project: Path) -> None:
    result = CliRunner().invoke(cli, ["hints", str(project / "app")])
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"git root:    {project.resolve()}" in out
    root_size = (project / "AGENTS.md").stat().st_size
    assert f"project  {project.resolve() / 'AGENTS.md'}  {root_size} bytes (" in out
    assert f"project  {project.resolve() / 'app' / '.goosehints'}  9 bytes\n" in out
    assert f"+ @docs/style.md -> {project.resolve() / 'docs' / 'style.md'}  5 bytes" in out
    assert "@/etc/hostname" in out and "absolute paths are not imported" in out
    assert "of 1,048,576 bytes used" in out
    assert "STYLE" not in out


def test_content_flag_prints_the_text_the_model_sees(project: Path) -> None:
    result = CliRunner().invoke(cli, ["hints", str(project), "--content"])
    assert result.exit_code == 0, result.output
    assert "--- Content from docs/style.md ---\nSTYLE\n--- End of docs/style.md ---" in (
        result.output
    )


def test_json_output_for_scripts(project: Path) -> None:
    result = CliRunner().invoke(cli, ["hints", str(project / "app"), "--json"])
    data = json.loads(result.output)
    assert [Path(item["path"]).name for item in data["loaded"]] == ["AGENTS.md", ".goosehints"]
    assert data["refused"][0]["reason"] == "absolute_path"
    assert 0 < data["budget_used"] < data["budget_bytes"]


def test_defaults_to_the_current_directory(project: Path) -> None:
    runner = CliRunner()
    old = Path.cwd()
    os.chdir(project)
    try:
        result = runner.invoke(cli, ["hints"])
    finally:
        os.chdir(old)
    assert f"working dir: {project.resolve()}" in result.output


def test_file_names_come_from_the_settings(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOSLING_CONTEXT_FILE_NAMES", '[".goosehints"]')
    result = CliRunner().invoke(cli, ["hints", str(project / "app")])
    assert "file names:  .goosehints" in result.output
    assert "AGENTS.md" not in result.output.split("loaded:")[1]


def test_a_bad_file_name_setting_is_a_clear_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOSLING_CONTEXT_FILE_NAMES", '["docs/AGENTS.md"]')
    result = CliRunner().invoke(cli, ["hints", str(project)])
    assert result.exit_code != 0
    assert "plain file name" in result.output


def test_nothing_found_says_so(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["hints", str(tmp_path)])
    assert result.exit_code == 0
    assert "no hint files found" in result.output
    assert "(none: only the working dir)" in result.output


def test_imports_are_capped_by_the_configured_window_as_in_a_run(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An AGENTS.md importing sixty 16 KiB files: `gosling hints` leaves out what a run
    would, and says which window capped it."""
    refs = " ".join(f"@docs/part{i:02}.md" for i in range(60))
    write(repo / "AGENTS.md", f"Read {refs}")
    for i in range(60):
        write(repo / "docs" / f"part{i:02}.md", f"part {i:02}\n" + "x" * 16_384)
    monkeypatch.setenv("GOSLING_CONTEXT_LIMIT", "128000")
    result = CliRunner().invoke(cli, ["hints", str(repo), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["context_window"] == 128_000
    assert payload["import_budget_bytes"] == 128_000 * 4 // 10  # a tenth of the window
    assert payload["budget_used"] <= payload["import_budget_bytes"] + 1_000
    text = CliRunner().invoke(cli, ["hints", str(repo)]).output
    assert "would exceed" in text and "@docs/part59.md" in text  # named as left out
    assert "capped at 51,200 bytes: a share of the 128,000-token window of the context_limit" in (
        text
    )
    monkeypatch.setenv("GOSLING_CONTEXT_LIMIT", "1000000")
    wide = json.loads(CliRunner().invoke(cli, ["hints", str(repo), "--json"]).output)
    assert wide["budget_used"] > payload["budget_used"] * 5  # a bigger window takes them all
