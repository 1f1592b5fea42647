"""`gosling config`: show the effective settings and where each came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from agent.config import ProjectConfig


@click.group("config")
def config_group() -> None:
    """Inspect gosling's settings."""


@config_group.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object for scripts.")
@click.option(
    "--dir",
    "working_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Working directory whose project config applies (default: the current one).",
)
def show(as_json: bool, working_dir: Path | None) -> None:
    """Print every setting, its value and where it came from."""
    from agent.cli.errors import ConfigProblem
    from agent.config import ConfigError, load_settings
    from prompts.locations import user_dirs

    try:
        loaded = load_settings(working_dir)
    except ConfigError as exc:
        raise ConfigProblem(str(exc)) from exc
    values = loaded.settings.model_dump(mode="json")
    ignored = _ignored(loaded.project)
    if as_json:
        payload: dict[str, dict[str, Any]] = {
            k: {"value": v, "source": loaded.sources[k]} for k, v in values.items()
        }
        for key, (value, source) in ignored.items():
            payload[key.split(".")[0]].setdefault("ignored", {})[key] = {
                "value": value,
                "source": source,
            }
        click.echo(json.dumps(payload, indent=2))
        return
    dirs = user_dirs()
    click.echo(f"config dir: {dirs.config}\ndata dir:   {dirs.data}\nstate dir:  {dirs.state}")
    click.echo("files:      " + (", ".join(map(str, loaded.files)) or "(none)"))
    click.echo()
    width = max(map(len, values))
    for key, value in values.items():
        click.echo(f"{key:<{width}}  {json.dumps(value)}  [{loaded.sources[key]}]")
    if ignored and loaded.project is not None:
        click.echo()
        click.echo(f"ignored (untrusted; apply with `gosling trust {loaded.project.root}`):")
        for key, (value, source) in ignored.items():
            click.echo(f"{key:<{width}}  {json.dumps(value)}  [ignored: untrusted {source}]")


def _ignored(project: ProjectConfig | None) -> dict[str, tuple[Any, str]]:
    """Dotted key -> (the value the untrusted project file sets, the file)."""
    from agent.config import read_config_file
    from agent.untrusted_config import value_at

    if project is None or not project.ignored:
        return {}
    data = read_config_file(project.path)
    return {key: (value_at(data, key), str(project.path)) for key in project.ignored}


@config_group.command("path")
def path() -> None:
    """Print the path of the user config file."""
    from prompts.locations import user_dirs

    click.echo(str(user_dirs().config / "config.toml"))


@config_group.command("provider")
@click.option(
    "--dir",
    "working_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Working directory whose project config applies (default: the current one).",
)
def provider(working_dir: Path | None) -> None:
    """Print the provider, model and context window a run here would use, and why.

    Exits 2, with the ways to get one, when no provider is configured or found.
    """
    import os

    from agent.cli.errors import ConfigProblem
    from agent.config import ConfigError, load_settings
    from agent.provider_choice import choose_provider, describe_choice
    from providers import ProviderError

    try:
        settings = load_settings(working_dir).settings
        chosen = choose_provider(settings)
    except ConfigError as exc:
        raise ConfigProblem(str(exc)) from exc
    except ProviderError as exc:
        click.echo(str(exc), err=True)
        raise SystemExit(2) from exc
    config = chosen.model_config
    click.echo(f"provider        {chosen.name}  [{describe_choice(settings, chosen, os.environ)}]")
    click.echo(f"model           {config.model}")
    click.echo(f"context window  {config.context_limit:,} tokens")
