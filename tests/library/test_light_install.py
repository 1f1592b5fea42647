"""The library imports none of the command line's stack, and the `gosling` command without
that stack (the `cli` extra) says how to install it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.library.library_use import CLI_STACK

USE = Path(__file__).with_name("library_use.py")


def _imported(stderr: str) -> set[str]:
    """Top-level module names from `python -X importtime` output."""
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)$", stderr, re.MULTILINE)
    return {name.split(".")[0] for name in names}


def test_import_gosling_imports_no_package_of_the_command_line() -> None:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import gosling"],
        capture_output=True,
        text=True,
        check=True,
    )
    imported = _imported(out.stderr)
    assert "gosling" in imported  # the parse saw the import
    assert not imported & {*CLI_STACK, "tree_sitter_bash", "anthropic", "openai", "pydantic"}


def test_using_the_api_imports_no_package_of_the_command_line(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", str(USE)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert out.stdout.strip() == "CLI_STACK="
    imported = _imported(out.stderr)
    assert {"gosling", "pydantic", "jinja2"} <= imported
    assert not imported & set(CLI_STACK)


def test_the_command_without_its_packages_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gosling.agent.cli import launch, main

    def needs_rich() -> None:
        raise ModuleNotFoundError("No module named 'rich'", name="rich")

    monkeypatch.setattr(main, "main", needs_rich)
    monkeypatch.setattr(launch, "missing_modules", lambda: ["rich"])
    with pytest.raises(SystemExit) as exited:
        launch.main()
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "(rich missing)" in err and "pip install 'gosling-agent[cli]'" in err


def test_another_missing_module_is_not_blamed_on_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from gosling.agent.cli import launch, main

    def needs_other() -> None:
        raise ModuleNotFoundError("No module named 'yaml'", name="yaml")

    monkeypatch.setattr(main, "main", needs_other)
    with pytest.raises(ModuleNotFoundError, match="yaml"):
        launch.main()
