"""`gosling acp`: serve the Agent Client Protocol on stdin/stdout until the editor hangs up.

stdout carries only the protocol; logs go to `<state>/logs/gosling.log` and warnings to
stderr, which editors show in their agent log. Exit codes: 0 when the editor closes the
connection, 2 for bad flags, 128+N on signal N (sessions are saved and released first).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click

from gosling.agent.cli.options import (
    MODES,
    agent_options,
    model_options,
    run_extras,
    sandbox_option,
    trust_option,
)


@click.command("acp")
@click.option(
    "--mode",
    type=click.Choice(MODES),
    help="Tool permission mode of new sessions (approve and smart_approve ask the editor).",
)
@trust_option
@model_options
@agent_options
@sandbox_option
def acp_command(
    provider: str | None,
    model: str | None,
    base_url: str | None,
    context_limit: int | None,
    mode: str | None,
    extensions: tuple[str, ...],
    trust_project: bool,
    working_dir: Path | None,
    append_system_prompt: str | None,
    instructions_file: Path | None,
    allowed_tools: tuple[str, ...],
    disallowed_tools: tuple[str, ...],
    mcp_configs: tuple[Path, ...],
    sandbox: str | None,
    sandbox_workspace: str | None,
) -> None:
    """Serve the Agent Client Protocol on stdio, for editors (Zed, JetBrains, Neovim).

    Each session works in the directory the editor opens it in."""
    if working_dir is not None:
        raise click.UsageError(
            "--working-dir does not apply to gosling acp: each session works in the "
            "directory the editor sends (its project)"
        )
    from gosling.agent.acp.server import ServeOptions
    from gosling.agent.cli.logs import setup_logging

    options = ServeOptions(
        flags={
            "provider": provider,
            "model": model,
            "base_url": base_url,
            "context_limit": context_limit,
            "mode": mode,
            "sandbox": sandbox,
            "sandbox_workspace": sandbox_workspace,
        },
        extensions=extensions,
        extras=run_extras(
            append_system_prompt, instructions_file, allowed_tools, disallowed_tools, mcp_configs
        ),
        trust_project=trust_project,
    )
    setup_logging(warnings_to_stderr=True)
    from gosling.agent.acp.serve import serve

    sys.exit(asyncio.run(serve(options)))
