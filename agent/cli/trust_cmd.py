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
    help="Forget the trust of DIRECTORY (its project config is untrusted again).",
)
def trust_command(directory: Path | None, list_: bool, revoke: bool) -> None:
    """Trust the project config (.gosling/config.toml) of DIRECTORY (default: the current
    one): its provider, base URL, extensions, mode and allow rules apply from now on, until
    the file changes. Without trust only context and hint settings and stricter safety
    settings apply."""
    from gosling.agent.trust import TrustStore

    store = TrustStore.default()
    if list_:
        if directory is not None or revoke:
            raise click.UsageError("--list takes no directory")
        entries = store.entries()
        if not entries:
            click.echo("No trusted folders.")
        for entry in entries:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.trusted_at))
            click.echo(f"{entry.path}  (trusted {when}: {', '.join(sorted(entry.files))})")
        return
    target = (directory or Path.cwd()).resolve()
    if revoke:
        if directory is None:
            raise click.UsageError("give the folder to revoke: gosling trust --revoke DIR")
        if store.revoke(target):
            click.echo(f"{target} is no longer trusted")
        else:
            click.echo(f"{target} was not trusted")
        return
    _trust(store, target)


def _trust(store: TrustStore, target: Path) -> None:
    from gosling.agent.config import ConfigError, find_project_config, read_config_file
    from gosling.agent.sandbox.choice import project_root
    from gosling.agent.tools.extension_config import ExtensionConfigError
    from gosling.agent.tools.mcp_json import load_mcp_json
    from gosling.agent.trust import PROJECT_MCP_FILE, file_digest, project_files
    from gosling.agent.untrusted_config import describe_values

    if not target.is_dir():
        raise click.ClickException(f"{target} is not a directory")
    config = find_project_config(target)
    root = config.parent.parent.resolve() if config else project_root(target.resolve())
    mcp = root / PROJECT_MCP_FILE
    if config is None and not mcp.is_file():
        raise click.ClickException(
            f"no .gosling/config.toml in {target} or its parents up to the git root, and no "
            f"{mcp}; nothing to trust"
        )
    shown = [file_digest(path) for path in (config, mcp) if path is not None and path.is_file()]
    if config is not None:
        try:
            data = read_config_file(config)
        except ConfigError as exc:
            raise click.ClickException(f"{exc}; fix it before trusting the folder") from exc
        click.echo(f"{config} sets:")
        for line in describe_values(data) or ["(nothing)"]:
            click.echo(f"  {line}")
    if mcp.is_file():
        try:
            servers = load_mcp_json(mcp, environ={})
        except ExtensionConfigError as exc:
            raise click.ClickException(f"{exc}; fix it before trusting the folder") from exc
        click.echo(f"{mcp} starts these MCP servers:")
        for server in servers or []:
            click.echo(f"  {server.name}: {server.describe()}")
    entry = store.trust(root, project_files(root))
    if any(digest not in entry.files.values() for digest in shown):
        store.revoke(root)  # changed between showing and recording it
        raise click.ClickException("a project file changed while it was shown; run this again")
    click.echo(f"trusted {root}; its project files apply until they change")
