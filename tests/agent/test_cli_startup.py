"""`gosling --help` and `--version` stay fast: no SDK, rich, pydantic, jinja2 or parser import."""

from __future__ import annotations

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
