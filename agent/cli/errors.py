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


FOREIGN_FLAGS = {
    "--add-dir": "tools work in the working directory (-C/--working-dir DIR), and the "
    "sandbox lets them write only there; --sandbox off lifts that",
    "--model-provider": "use --provider NAME",
    "--ask-for-approval": "use --mode approve (ask before each tool) or --mode smart_approve",
    "-a": "use --mode approve (ask before each tool) or --mode smart_approve",
    "--profile": "settings live in one user config file (`gosling config path`); "
    "`gosling config set KEY VALUE` changes one",
    "--settings": "settings live in one user config file (`gosling config path`); "
    "`gosling config set KEY VALUE` changes one",
    "--max-budget-usd": "use --max-turns N to bound a run",
    "--fallback-model": "gosling retries the same model (max_retries in config)",
    "--system-prompt": "use --append-system-prompt TEXT or --instructions FILE",
}
"""Flags of Claude Code, Codex and goose that gosling has no alias for: what it calls them."""


def format_error(exc: click.ClickException) -> str:
    """The one line (or two) printed for a ClickException."""
    if isinstance(exc, click.NoSuchOption) and exc.option_name in FOREIGN_FLAGS:
        exc = click.UsageError(
            f"gosling has no {exc.option_name}: {FOREIGN_FLAGS[exc.option_name]}", exc.ctx
        )
    message = exc.format_message().strip()
    message = message[:1].lower() + message[1:]
    if isinstance(exc, click.UsageError):
        message = message.replace(". Did you mean", "; did you mean")
        message = message.replace(" Did you mean", "; did you mean")
        if exc.ctx is not None:
            message += f"\n(see '{exc.ctx.command_path} --help')"
    return f"error: {message}"


def error_line(text: str) -> str:
    """`error: text` with the first letter lowered, for messages built outside click."""
    text = text.strip()
    return f"error: {text[:1].lower()}{text[1:]}"


def startup_exit_code(exc: BaseException) -> int | None:
    """The exit code for an error raised while a command sets up its runtime: 2 for what the
    user set wrong (config, provider name, key, model, working dir, MCP config), 1 for what
    failed at run time (the provider or the session store), None for anything else. `run`
    and `session` share it, so both say the same thing with the same code."""
    from gosling.agent.config import ConfigError
    from gosling.agent.provider_choice import NoProviderFound
    from gosling.providers import ProviderError
    from gosling.providers.errors import MissingApiKey, ProviderConfigError
    from gosling.sessions import SessionStoreError

    if isinstance(exc, ConfigError | ValueError | ProviderConfigError | MissingApiKey):
        return EXIT_USAGE
    if isinstance(exc, NoProviderFound):
        return EXIT_USAGE
    if isinstance(exc, ProviderError | SessionStoreError):
        return EXIT_ERROR
    return None


def check_working_dir(path: object) -> None:
    """`--working-dir` must name an existing directory; raises ConfigError naming the fix."""
    from pathlib import Path

    from gosling.agent.config import ConfigError

    if path is None:
        return
    assert isinstance(path, Path)
    if not path.exists():
        raise ConfigError(
            f"--working-dir {path} does not exist; create it (mkdir -p {path}) or pass an "
            "existing directory"
        )
    if not path.is_dir():
        raise ConfigError(f"--working-dir {path} is not a directory; pass a directory")
