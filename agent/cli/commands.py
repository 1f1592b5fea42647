"""The `gosling` command's table of commands, and its root `--help` and `--version` answered
without importing click.

`gosling --help` and `gosling --version` are what people and scripts run most often to see
whether the tool is there; importing click alone costs more than the bare interpreter's
start. The table below is all those two answers need, so `agent.cli.launch` prints them from
here and only falls back to click when the terminal is too narrow for the lines as they stand
(click would wrap them). A test holds the two renderings identical.
"""

from __future__ import annotations

import os

# name -> ("module", "attribute", "one-line help"): the help text is here so --help imports nothing.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "acp": (
        "gosling.agent.acp.command",
        "acp_command",
        "Serve the Agent Client Protocol on stdio, for editors.",
    ),
    "batch": (
        "gosling.batch.cli",
        "batch_command",
        "Run many tasks headlessly, on a local pool or on Ray.",
    ),
    "run": (
        "gosling.agent.cli.run_cmd",
        "run_command",
        "Run one prompt headlessly; the answer goes to stdout.",
    ),
    "config": (
        "gosling.agent.cli.config_cmd",
        "config_group",
        "Show or change settings (show, set, unset, path, provider).",
    ),
    "configure": (
        "gosling.agent.cli.configure_cmd",
        "configure_command",
        "Set provider, model, base URL and mode by answering questions.",
    ),
    "hints": (
        "gosling.agent.cli.hints_cmd",
        "hints_command",
        "Show which hint files load for a directory.",
    ),
    "hooks": (
        "gosling.agent.cli.hooks_cmd",
        "hooks_command",
        "List the configured hooks and where each came from.",
    ),
    "context": (
        "gosling.agent.cli.context_cmd",
        "context_group",
        "Replay a session through the context pipeline.",
    ),
    "session": (
        "gosling.agent.cli.session_cmd",
        "session_command",
        "Chat with the agent interactively (the default).",
    ),
    "trust": (
        "gosling.agent.cli.trust_cmd",
        "trust_command",
        "Trust a folder's project config (or --list, --revoke DIR).",
    ),
    "sessions": (
        "gosling.agent.cli.sessions_cmd",
        "sessions_group",
        "List, show, rename, remove, export and import sessions.",
    ),
}


ROOT_DOC = """gosling: an agent runtime with goose-grade context management.

Run without a command on a terminal to start an interactive session."""

HELP_FLAGS = ("-h", "--help")
VERSION_FLAGS = ("-v", "-V", "--version")
"""The root options, as click declares them in `agent.cli.main` and as the page lists them."""
ROOT_OPTION_ROWS = (
    (", ".join(VERSION_FLAGS), "Show the version and exit."),
    (", ".join(HELP_FLAGS), "Show this message and exit."),
)
HELP_WORDS = frozenset({*HELP_FLAGS, "help"})
VERSION_WORDS = frozenset({*VERSION_FLAGS, "version"})
CLICK_MAX_WIDTH = 80
"""Click formats help to the terminal's width, at most this, less two columns."""


def _rows(title: str, rows: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> list[str]:
    width = max(len(first) for first, _ in rows)
    return [f"{title}:", *(f"  {first.ljust(width)}  {second}" for first, second in rows)]


def root_help() -> str:
    """The root `--help` page, laid out as click lays it out."""
    lines = ["Usage: gosling [OPTIONS] [COMMAND] [ARGS]...", ""]
    for paragraph in ROOT_DOC.split("\n\n"):
        lines += [f"  {paragraph}", ""]
    lines += _rows("Options", ROOT_OPTION_ROWS)
    lines.append("")
    lines += _rows("Commands", [(name, COMMANDS[name][2]) for name in sorted(COMMANDS)])
    return "\n".join(lines) + "\n"


def _help_width() -> int:
    """The width click would format to (its `shutil.get_terminal_size` rule, without shutil)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(1).columns
        except (OSError, ValueError):
            columns = 80
    return max(min(columns, CLICK_MAX_WIDTH) - 2, 50)


def root_reply(args: list[str], version: str) -> str | None:
    """What `gosling ARGS` prints when ARGS only ask for the root help or the version, or None
    when click must handle them (any other arguments, or a terminal too narrow)."""
    if len(args) != 1:
        return None
    if args[0] in VERSION_WORDS:
        return f"gosling, version {version}\n"
    if args[0] in HELP_WORDS:
        text = root_help()
        if max(len(line) for line in text.splitlines()) <= _help_width():
            return text
    return None
