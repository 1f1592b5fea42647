"""Entry point of the `gosling` command. Keep imports here cheap: `--help` must start fast."""

from __future__ import annotations

import click

from agent.version import __version__


@click.group(invoke_without_command=True)
@click.version_option(__version__, prog_name="gosling")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """gosling: an agent runtime with goose-grade context management."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


def main() -> None:
    cli()
