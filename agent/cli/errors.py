"""One error style for every command: `error: <what went wrong; how to fix it>` on stderr.

Exit codes: 2 for anything the user gave wrong (a flag, a provider or mode name, a config
file), 1 for what went wrong at run time. Click's own usage errors are reworded to match,
with the help command to read.
"""

from __future__ import annotations

from collections.abc import Iterable

import click

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_MAX_TURNS = 3
EXIT_PERMISSION_DENIED = 4
EXIT_INTERRUPTED = 130
"""The exit codes of `gosling run` and `gosling session` (the README's table)."""


class ConfigProblem(click.ClickException):
    """A setting, flag value or config file is wrong: exit 2, like a usage error."""

    exit_code = EXIT_USAGE


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`; did you mean 'x'?` for the closest choice, or nothing."""
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def format_error(exc: click.ClickException) -> str:
    """The one line (or two) printed for a ClickException."""
    message = exc.format_message().strip()
    message = message[:1].lower() + message[1:]
    if isinstance(exc, click.UsageError):
        message = message.replace(" Did you mean", "; did you mean")
        if exc.ctx is not None:
            message += f"\n(see '{exc.ctx.command_path} --help')"
    return f"error: {message}"


def error_line(text: str) -> str:
    """`error: text` with the first letter lowered, for messages built outside click."""
    text = text.strip()
    return f"error: {text[:1].lower()}{text[1:]}"
