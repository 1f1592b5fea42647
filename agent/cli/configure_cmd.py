"""`gosling configure`: set up the provider, model, base URL and permission mode by
answering questions, as `goose configure` does. Every answer is written with the same
checks as `gosling config set`; API keys are never written (they stay in the environment)."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from gosling.agent.cli.options import MODES

LOCAL_SERVERS = frozenset({"ollama", "vllm", "llamacpp", "lmstudio", "openai-compatible"})


@click.command("configure")
def configure_command() -> None:
    """Choose provider, model, base URL and mode interactively; writes the user config."""
    from gosling.agent.cli.errors import ConfigProblem
    from gosling.agent.config import ConfigError, load_settings
    from gosling.agent.config_write import set_user_setting, unset_user_setting
    from gosling.providers.factory import PROVIDER_NAMES, PROVIDERS

    if not sys.stdin.isatty():
        raise ConfigProblem(
            "gosling configure asks questions and needs a terminal; in scripts use "
            "`gosling config set KEY VALUE` (e.g. gosling config set provider anthropic)"
        )
    try:
        current = load_settings().settings
    except ConfigError as exc:
        raise ConfigProblem(f"{exc}; fix it (or `gosling config unset KEY`) first") from exc
    click.echo("Configure gosling (Enter keeps the value in brackets; Ctrl-C leaves).\n")
    for name in PROVIDER_NAMES:
        info = PROVIDERS[name]
        key = info.api_key_env
        state = f"{key} is set" if key and os.environ.get(key) else (f"needs {key}" if key else "")
        click.echo(f"  {name:<18} {state}")
    provider: str = click.prompt(
        "\nProvider",
        type=click.Choice(list(PROVIDER_NAMES)),
        default=current.provider or _first_with_key(),
        show_choices=False,
    )
    info = PROVIDERS[provider]
    if info.api_key_env and not os.environ.get(info.api_key_env):
        click.echo(
            f"note: gosling reads the key from ${info.api_key_env}; it is not set here. Add "
            f"`export {info.api_key_env}=...` to your shell profile (keys are never written "
            "to the config file)."
        )
    model: str = click.prompt(
        "Model", default=current.model or info.default_model or "", show_default=True
    )
    url_default = current.base_url or ("" if provider not in LOCAL_SERVERS else None)
    base_url: str = click.prompt(
        "Base URL (empty: the provider's default)",
        default=url_default if url_default is not None else info.default_base_url or "",
        show_default=True,
    )
    mode: str = click.prompt(
        "Permission mode", type=click.Choice(MODES), default=str(current.mode), show_choices=True
    )
    answers: dict[str, Any] = {"provider": provider, "model": model, "mode": mode}
    try:
        written = {k: set_user_setting(k, str(v))[0] for k, v in answers.items() if v}
        if base_url.strip() and base_url.strip() != (info.default_base_url or ""):
            written["base_url"], path = set_user_setting("base_url", base_url.strip())
        else:
            unset_user_setting("base_url")
            _, path = set_user_setting("provider", provider)
    except ConfigError as exc:
        raise ConfigProblem(str(exc)) from exc
    click.echo(f"\nwrote {path}:")
    for key, value in written.items():
        click.echo(f"  {key} = {value!r}")
    click.echo("`gosling config provider` shows what a run would use.")


def _first_with_key() -> str:
    from gosling.providers.factory import PROVIDER_NAMES, PROVIDERS

    for name in PROVIDER_NAMES:
        key = PROVIDERS[name].api_key_env
        if key and os.environ.get(key):
            return name
    return "ollama"
