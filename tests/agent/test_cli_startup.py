"""`gosling --help` and `--version` stay fast: no SDK, rich, pydantic, jinja2 or parser import."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HEAVY = [
    "anthropic",
    "openai",
    "mcp",
    "rich",
    "prompt_toolkit",
    "pydantic",
    "jinja2",
    "tiktoken",
    "ray",
    "tree_sitter",
    "tree_sitter_bash",
    "acp",
]

PROBE = """
import sys
sys.argv = ["gosling", {arg!r}]
from gosling.agent.cli.main import main
try:
    main()
except SystemExit:
    pass
loaded = [m for m in {heavy!r} if m in sys.modules]
print("LOADED=" + ",".join(loaded), file=sys.stderr)
"""


@pytest.mark.parametrize("arg", ["--help", "--version"])
def test_help_and_version_import_nothing_heavy(arg: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(arg=arg, heavy=HEAVY)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "LOADED=\n" in out.stderr or out.stderr.strip().endswith("LOADED=")
    assert out.stdout.strip()


def test_version_output() -> None:
    from gosling.agent.version import __version__

    out = subprocess.run(
        [sys.executable, "-m", "gosling", "--version"], capture_output=True, text=True
    )
    assert out.returncode == 0
    assert out.stdout.strip() == f"gosling, version {__version__}"


def _gosling(args: list[str], columns: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run(
        [sys.executable, "-m", "gosling", *args], capture_output=True, text=True, env=env
    )


def _click_rendering(args: list[str], columns: int) -> str:
    """What click itself prints for ARGS (the entry point that skips the quick answers)."""
    probe = f"import sys; sys.argv = ['gosling', *{args!r}]\n" + (
        "from gosling.agent.cli.main import main\nmain()\n"
    )
    env = {**os.environ, "COLUMNS": str(columns)}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("columns", [200, 80, 60])
@pytest.mark.parametrize("args", [["--help"], ["-h"], ["help"], ["--version"], ["-V"]])
def test_the_quick_root_answers_read_exactly_as_click_renders_them(
    args: list[str], columns: int
) -> None:
    """The root help and version are printed without click; what a user reads is the same
    page click prints, at any terminal width (a narrow one falls back to click's wrapping)."""
    out = _gosling(args, columns)
    assert out.returncode == 0, out.stderr
    assert out.stdout == _click_rendering(["--help" if args == ["help"] else args[0]], columns)


def test_the_root_help_does_not_import_the_command_line_framework() -> None:
    probe = (
        "import sys\n"
        "sys.argv = ['gosling', '--help']\n"
        "from gosling.agent.cli.launch import main\n"
        "main()\n"
        "print('CLICK' if 'click' in sys.modules else 'NO-CLICK', file=sys.stderr)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "100"},
    )
    assert out.stderr.strip() == "NO-CLICK"
    assert "Commands:" in out.stdout


def test_a_command_word_still_goes_to_click() -> None:
    out = _gosling(["hints", "--help"], 100)
    assert out.returncode == 0
    assert "Usage: gosling hints" in out.stdout
