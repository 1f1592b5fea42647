"""The `gosling` command's entry point: checks that the command line's own packages are
installed (the `cli` extra) before loading it, so a library-only install says what to do
instead of failing on an import deep inside."""

from __future__ import annotations

import sys
from importlib.util import find_spec

CLI_MODULES = (
    "click",
    "rich",
    "prompt_toolkit",
    "mcp",
    "acp",
    "tree_sitter",
    "tree_sitter_bash",
    "tomlkit",
)
"""Top-level modules of the `cli` extra's distributions (acp: agent-client-protocol)."""
INSTALL_HINT = "pip install 'gosling-agent[cli]'"


def missing_modules() -> list[str]:
    return [name for name in CLI_MODULES if find_spec(name) is None]


def main() -> None:
    missing = missing_modules()
    if missing:
        print(
            f"error: the gosling command needs its command-line packages ({', '.join(missing)} "
            f"missing); install them with: {INSTALL_HINT}\n"
            "(the library, `import gosling`, works without them)",
            file=sys.stderr,
        )
        sys.exit(2)
    from gosling.agent.cli.main import main as cli_main

    cli_main()
