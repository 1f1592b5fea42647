"""`gosling hints [DIR]`: exactly which hint files the agent would load for a directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from gosling.agent.agent import Agent
    from gosling.agent.config import Settings
    from gosling.hints import HintReport


@click.command("hints")
@click.argument(
    "directory",
    required=False,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@click.option("--content", is_flag=True, help="Also print the hint text the model would see.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object for scripts.")
def hints_command(directory: Path | None, content: bool, as_json: bool) -> None:
    """Show the hint files loaded for DIRECTORY (default: the current one): their paths and
    sizes, the @file imports they pull in, what was refused and why, and the budget used."""
    from gosling.agent.config import ConfigError, load_settings
    from gosling.agent.system_prompt import hint_import_budget
    from gosling.agent.user_inputs import user_hint_dirs
    from gosling.hints import collect_hints
    from gosling.hints.lookalikes import skipped_hint_files

    working_dir = (directory or Path.cwd()).resolve()
    try:
        loaded = load_settings(working_dir)
        names = loaded.settings.context_file_names
        dirs = user_hint_dirs()
        window, window_why = configured_window(loaded.settings)
        report = collect_hints(
            working_dir,
            names,
            global_dir=dirs.global_dir,
            home_dir=dirs.home_dir,
            global_filenames=loaded.global_hint_names,
            import_budget_bytes=hint_import_budget(window),
        )
        skipped = skipped_hint_files(working_dir, names)
    except (ConfigError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    imports = f"@file imports capped at {hint_import_budget(window):,} bytes: a share of the "
    imports += f"{window:,}-token window of {window_why}"
    if as_json:
        payload = report_as_dict(report)
        payload["skipped_other_agents"] = [str(path) for path in skipped]
        payload["import_budget_bytes"] = hint_import_budget(window)
        payload["context_window"] = window
        click.echo(json.dumps(payload, indent=2))
        return
    click.echo(format_report(report))
    click.echo(imports)
    if skipped:
        click.echo(format_skipped(skipped, names))
    if content:
        click.echo("\n" + (report.text or "(no hint text)"))


def configured_window(settings: Settings) -> tuple[int, str]:
    """The context window a run with `settings` would cap hint imports by, and why, without
    choosing a provider (no key is read, no server asked)."""
    from gosling.agent.provider_choice import configured_model_limits
    from gosling.providers.registry import lookup_model

    if settings.context_limit:
        return settings.context_limit, "the context_limit setting"
    if settings.model:
        limits = lookup_model(settings.model, configured_model_limits(settings))
        return limits.context_limit, f"the model {settings.model}"
    from gosling.providers.base import DEFAULT_CONTEXT_LIMIT

    return DEFAULT_CONTEXT_LIMIT, "an unknown model (no model or context_limit configured)"


def report_for_agent(agent: Agent) -> HintReport:
    """The hint report of a running agent (the `/hints` command of a terminal session and of
    an editor's): its own names and global files, imports capped by its model's window."""
    from gosling.agent.system_prompt import hint_import_budget
    from gosling.agent.user_inputs import user_hint_dirs
    from gosling.hints import collect_hints

    dirs = user_hint_dirs()
    return collect_hints(
        agent.working_dir,
        agent.config.context_file_names,
        global_dir=dirs.global_dir,
        home_dir=dirs.home_dir,
        global_filenames=agent.global_hint_files,
        import_budget_bytes=hint_import_budget(agent.provider.model_config.context_limit),
    )


def format_report(report: HintReport) -> str:
    """The report as plain lines for a terminal."""
    git_root = str(report.git_root) if report.git_root else "(none: only the working dir)"
    lines = [
        f"working dir: {report.working_dir}",
        f"git root:    {git_root}",
        f"file names:  {', '.join(report.filenames) or '(none)'}",
        f"global dir:  {report.global_dir or '(none)'}",
        "",
    ]
    if report.loaded:
        lines.append("loaded:")
        for hint in report.loaded:
            lines.append(
                f"  {hint.scope:<8} {hint.path}  {hint.size_bytes:,} bytes"
                + (f" ({hint.output_bytes:,} with imports)" if hint.imports else "")
            )
            for item in hint.imports:
                indent = "    " * item.depth
                lines.append(f"  {indent}+ @{item.ref} -> {item.path}  {item.size_bytes:,} bytes")
    else:
        lines.append("loaded: no hint files found")
    if report.refused:
        lines.append("refused:")
        lines.extend(f"  {refusal.describe()}" for refusal in report.refused)
    share = report.budget_used / report.budget_bytes if report.budget_bytes else 0.0
    lines.append(
        f"budget: {report.budget_used:,} of {report.budget_bytes:,} bytes used ({share:.1%})"
    )
    return "\n".join(lines)


def format_skipped(skipped: list[Path], names: list[str]) -> str:
    """Other agents' hint files that were not loaded, and the setting that would load them."""
    wanted = list(names) + sorted({path.name for path in skipped} - set(names))
    listed = ", ".join(f'"{name}"' for name in wanted)
    return "\n".join(
        [
            "not loaded (written for other agents):",
            *(f"  {path}" for path in skipped),
            f"  to load them, set in config.toml: context_file_names = [{listed}]",
        ]
    )


def report_as_dict(report: HintReport) -> dict[str, Any]:
    return {
        "working_dir": str(report.working_dir),
        "git_root": str(report.git_root) if report.git_root else None,
        "filenames": list(report.filenames),
        "global_dir": None if report.global_dir is None else str(report.global_dir),
        "loaded": [
            {
                "path": str(hint.path),
                "scope": hint.scope,
                "size_bytes": hint.size_bytes,
                "output_bytes": hint.output_bytes,
                "imports": [
                    {
                        "ref": item.ref,
                        "path": str(item.path),
                        "source": str(item.source),
                        "depth": item.depth,
                        "size_bytes": item.size_bytes,
                    }
                    for item in hint.imports
                ],
            }
            for hint in report.loaded
        ],
        "refused": [
            {
                "reason": refusal.reason.name.lower(),
                "message": refusal.describe(),
                "path": str(refusal.path) if refusal.path else None,
                "ref": refusal.ref,
                "source": str(refusal.source) if refusal.source else None,
            }
            for refusal in report.refused
        ],
        "budget_used": report.budget_used,
        "budget_bytes": report.budget_bytes,
    }
