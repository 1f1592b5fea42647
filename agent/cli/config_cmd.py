"""`gosling config`: show the effective settings and where each came from."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from gosling.agent.config import ProjectConfig, Settings

CHOSEN_AT_RUN_TIME = frozenset({"provider", "model", "context_limit"})
"""Settings that, left unset, are decided when a run starts (shown under "a run here would
use")."""


@click.group("config")
def config_group() -> None:
    """Inspect and change gosling's settings."""


@config_group.command("set")
@click.argument("key")
@click.argument("value")
def set_(key: str, value: str) -> None:
    """Write KEY = VALUE into the user config, checked as loading checks it (type, choices,
    range). Lists take JSON or commas: gosling config set context_file_names AGENTS.md,CLAUDE.md"""
    from gosling.agent.cli.errors import ConfigProblem
    from gosling.agent.config import ConfigError
    from gosling.agent.config_write import set_user_setting

    try:
        written, path = set_user_setting(key, value)
    except ConfigError as exc:
        raise ConfigProblem(str(exc)) from exc
    click.echo(f"{key} = {json.dumps(written)}  [{path}]")


@config_group.command("unset")
@click.argument("key")
def unset(key: str) -> None:
    """Remove KEY from the user config (its default, or another layer, applies again)."""
    from gosling.agent.cli.errors import ConfigProblem
    from gosling.agent.config import ConfigError
    from gosling.agent.config_write import unset_user_setting

    try:
        removed = unset_user_setting(key)
    except ConfigError as exc:
        raise ConfigProblem(str(exc)) from exc
    click.echo(f"removed {key}" if removed else f"{key} was not set in the user config")


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
    from gosling.agent.cli.errors import ConfigProblem
    from gosling.agent.config import ConfigError, load_settings
    from gosling.prompts.locations import user_dirs

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
    click.echo("a run here would use:")
    for line in _effective_lines(loaded.settings, loaded.sources):
        click.echo(f"  {line}")
    click.echo()
    width = max(map(len, values))
    for key, value in values.items():
        source = loaded.sources[key]
        if value is None and key in CHOSEN_AT_RUN_TIME:
            source = "not set: chosen at run time, see above"
        click.echo(f"{key:<{width}}  {json.dumps(value)}  [{source}]")
    if ignored and loaded.project is not None:
        click.echo()
        click.echo(f"ignored (untrusted; apply with `gosling trust {loaded.project.root}`):")
        for key, (value, source) in ignored.items():
            click.echo(f"{key:<{width}}  {json.dumps(value)}  [ignored: untrusted {source}]")


def _ignored(project: ProjectConfig | None) -> dict[str, tuple[Any, str]]:
    """Dotted key -> (the value the untrusted project file sets, the file)."""
    from gosling.agent.config import read_config_file
    from gosling.agent.untrusted_config import value_at

    if project is None or not project.ignored:
        return {}
    data = read_config_file(project.path)
    return {key: (value_at(data, key), str(project.path)) for key in project.ignored}


def _effective_lines(settings: Settings, sources: Mapping[str, str]) -> list[str]:
    """The provider, model and context window a run would use, each with its reason; raises
    ProviderError when none can be chosen."""
    import os

    from gosling.agent.provider_choice import (
        NO_PROVIDER_MESSAGE,
        choose_provider,
        describe_effective,
    )
    from gosling.providers import ProviderError

    try:
        chosen = choose_provider(settings)
    except ProviderError as exc:
        why = (
            "no API key set and no Ollama server answered"
            if str(exc).strip() == NO_PROVIDER_MESSAGE.strip()
            else str(exc).strip().splitlines()[0]
        )
        return [f"{'provider':<14}  none  [{why}; `gosling config provider` says how to get one]"]
    rows = describe_effective(settings, chosen, os.environ, sources)
    return [f"{what:<14}  {value}  [{why}]" for what, value, why in rows]


@config_group.command("path")
def path() -> None:
    """Print the path of the user config file."""
    from gosling.prompts.locations import user_dirs

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

    from gosling.agent.cli.errors import ConfigProblem
    from gosling.agent.config import ConfigError, load_settings
    from gosling.agent.provider_choice import choose_provider, describe_effective
    from gosling.providers import ProviderError

    try:
        loaded = load_settings(working_dir)
        chosen = choose_provider(loaded.settings)
    except ConfigError as exc:
        raise ConfigProblem(str(exc)) from exc
    except ProviderError as exc:
        click.echo(str(exc), err=True)
        raise SystemExit(2) from exc
    for what, value, why in describe_effective(loaded.settings, chosen, os.environ, loaded.sources):
        click.echo(f"{what:<14}  {value}  [{why}]")
