"""Options shared by `gosling run` and `gosling session`: which model, where, with what."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

F = TypeVar("F", bound=Callable[..., object])

MODES = ["auto", "approve", "smart_approve", "chat"]


def model_options(function: F) -> F:
    """--provider, --model, --base-url, --context-limit, --with-extension, --working-dir."""
    options = [
        click.option("--provider", help="Provider name (anthropic, openai, ollama, ...)."),
        click.option("--model", help="Model name."),
        click.option("--base-url", help="Base URL of the provider's API (proxies, local servers)."),
        click.option(
            "--context-limit", type=click.IntRange(min=1), help="Context window in tokens."
        ),
        click.option(
            "--with-extension",
            "extensions",
            multiple=True,
            metavar="SPEC",
            help="Add an MCP server: 'name:ENV=v command args' or a URL. Repeatable.",
        ),
        click.option(
            "--working-dir",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            help="Work in this directory instead of the current one.",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function
