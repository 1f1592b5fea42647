"""The `gosling` command's entry point: when a package of the command line's own stack (the
`cli` extra) is not installed, a library-only install says what to do instead of failing
with a traceback from an import deep inside. The root `--help` and `--version` are answered
from `agent.cli.commands` before click is imported at all (once the extra is known to be
installed: a page of commands that cannot run would only defer the error)."""

from __future__ import annotations

import sys

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
    """The `cli` extra's modules that cannot be imported, found without importing them."""
    return [name for name in CLI_MODULES if not _findable(name)]


def _findable(name: str) -> bool:
    # What `importlib.util.find_spec` does for a top-level name, without importing
    # importlib.util (3.5 ms of `contextlib` and `functools` on `gosling --help`).
    if name in sys.modules:
        return True
    return any(
        finder.find_spec(name, None) is not None
        for finder in sys.meta_path
        if hasattr(finder, "find_spec")
    )


def main() -> None:
    """Run the command; a module of the `cli` extra that is not installed ends it with one
    line naming the install command (looked for up front only for the quick root pages, and
    otherwise once an import has failed, so a command's start-up pays nothing)."""
    from gosling.agent.cli.commands import root_reply
    from gosling.agent.version import __version__

    reply = root_reply(sys.argv[1:], __version__)
    if reply is not None and not missing_modules():
        sys.stdout.write(reply)
        sys.stdout.flush()
        return
    try:
        from gosling.agent.cli.main import main as cli_main

        cli_main()
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in CLI_MODULES:
            raise
        missing = missing_modules() or [exc.name or "?"]
        print(
            f"error: the gosling command needs its command-line packages ({', '.join(missing)} "
            f"missing); install them with: {INSTALL_HINT}\n"
            "(the library, `import gosling`, works without them)",
            file=sys.stderr,
        )
        sys.exit(2)
