"""`gosling trust`: trust a folder's project config (or list and revoke trust)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from gosling.agent.trust import TrustStore


@click.command("trust")
@click.argument(
    "directory", required=False, type=click.Path(file_okay=False, path_type=Path), default=None
)
@click.option("--list", "list_", is_flag=True, help="List the trusted folders.")
@click.option(
    "--revoke",
    "revoke",
    is_flag=True,
    help="Forget the trust of the folder DIRECTORY is in (default: the current one).",
)
def trust_command(directory: Path | None, list_: bool, revoke: bool) -> None:
    """Trust the project files of the folder DIRECTORY is in (default: the current one):
    .gosling/config.toml (provider, base URL, extensions, hooks, mode, allow rules),
    .mcp.json and .claude/settings.json apply from now on, until one of them, or a file of
    the repository their commands run, changes. First shows every command, URL and hook it
    would run, and which of your secrets each would receive. Without trust only context and
    hint settings and stricter safety settings apply."""
    from gosling.agent.trust import TrustStore, trust_root

    store = TrustStore.default()
    if list_:
        if directory is not None or revoke:
            raise click.UsageError("--list takes no directory")
        entries = store.entries()
        if not entries:
            click.echo("No trusted folders.")
        for entry in entries:
            when = "at an unknown time"
            if entry.trusted_at is not None:
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.trusted_at))
            click.echo(f"{entry.path}  (trusted {when}: {', '.join(sorted(entry.files))})")
        return
    target = (directory or Path.cwd()).resolve()
    if not target.is_dir():
        raise click.ClickException(f"{target} is not a directory")
    if revoke:
        folder = store.revoke(target)
        if folder is not None:
            click.echo(f"{folder} is no longer trusted; its project files no longer apply")
        else:
            click.echo(f"{trust_root(target)} was not trusted (nor any folder it is in)")
        return
    _trust(store, trust_root(target))


def _trust(store: TrustStore, root: Path) -> None:
    from gosling.agent.trust import file_digest, gated_files, project_files

    gated = gated_files(root)
    if not gated:
        raise click.ClickException(
            f"{root} has no .gosling/config.toml, .mcp.json or .claude/settings.json; "
            "nothing to trust"
        )
    files = project_files(root)
    shown = {path: file_digest(path) for path in files}
    from gosling.agent.trust_display import trust_lines

    try:
        lines = trust_lines(root)
    except ValueError as exc:
        raise click.ClickException(f"{exc}; fix it before trusting the folder") from exc
    for line in lines:
        click.echo(line)
    entry = store.trust(root, files)
    if any(digest not in entry.files.values() for digest in shown.values()):
        store.revoke(root)  # changed between showing and recording it
        raise click.ClickException("a project file changed while it was shown; run this again")
    click.echo(f"trusted {root}; its project files apply until they change")
