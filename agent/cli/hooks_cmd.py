"""`gosling hooks [DIR]`: every hook that runs for a directory, and where it came from."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import click


@click.command("hooks")
@click.argument(
    "directory",
    required=False,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object for scripts.")
def hooks_command(directory: Path | None, as_json: bool) -> None:
    """List the hooks configured for DIRECTORY (default: the current one) by event: matcher,
    command, timeout and the file each came from; what is configured but not run, and why."""
    from gosling.agent.config import ConfigError, load_settings
    from gosling.agent.hooks.sources import collect_hooks

    working_dir = (directory or Path.cwd()).resolve()
    try:
        loaded = load_settings(working_dir)
    except (ConfigError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    found = collect_hooks(loaded, working_dir)
    problems = list(found.problems)
    project = loaded.project
    if project is not None and "hooks" in project.ignored:
        problems.insert(
            0,
            f"the hooks of untrusted {project.path} are not run; to run them: "
            f"gosling trust {shlex.quote(str(project.root))}",
        )
    if as_json:
        payload: dict[str, Any] = {
            "hooks": [vars(h) for h in found.hooks],
            "skipped": [vars(s) for s in found.skipped],
            "problems": problems,
        }
        click.echo(json.dumps(payload, indent=2))
        return
    if not found.hooks:
        click.echo("No hooks configured.")
    from gosling.agent.hooks.config import HOOK_EVENTS

    for event in HOOK_EVENTS:
        hooks = found.for_event(event)
        if not hooks:
            continue
        click.echo(f"{event}:")
        for hook in hooks:
            matcher = f"[{hook.matcher}] " if hook.matcher not in ("", "*") else ""
            click.echo(f"  {matcher}{hook.command}  (timeout {hook.timeout:g}s)")
            click.echo(f"      from {hook.source}")
    if found.skipped:
        click.echo("Not run by gosling:")
        for skip in found.skipped:
            what = f" {skip.what}" if skip.what else ""
            click.echo(f"  {skip.event}{what}: {skip.why}  (from {skip.source})")
    for problem in problems:
        click.echo(f"warning: {problem}", err=True)
