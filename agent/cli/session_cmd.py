"""`gosling session`: chat with the agent interactively (also plain `gosling` on a terminal).

Exit codes: 0 when the user leaves, 1 when the provider or the session store cannot be set
up, 2 for usage errors (bad flags or config, no terminal), 130 for Ctrl-C during start-up.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gosling.agent.cli.errors import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    check_working_dir,
    error_line,
    startup_exit_code,
)
from gosling.agent.cli.options import (
    MODES,
    agent_options,
    familiar_flags,
    model_options,
    resume_options,
    resume_request,
    run_extras,
    sandbox_option,
    trust_option,
)

if TYPE_CHECKING:
    from gosling.agent.cli.interactive.render import Renderer
    from gosling.agent.cli.interactive.terminal import Terminal
    from gosling.agent.runtime import RunExtras
    from gosling.providers import Provider


@dataclass(frozen=True)
class SessionOptions:
    flags: dict[str, Any] = field(default_factory=dict)
    """Settings given as flags (provider, model, base_url, context_limit, mode)."""
    resume: str | None = None
    """None: a new session; "": the latest session of the working dir; else that id."""
    name: str = ""
    extensions: tuple[str, ...] = ()
    working_dir: Path | None = None
    extras: RunExtras | None = None
    trust_project: bool = False
    """Apply the project config as trusted without asking (`--trust-project`)."""
    first_prompt: str = ""
    """Sent as soon as the session is open (`gosling "fix the bug"`, as `claude "..."`)."""


@click.command("session")
@click.argument("prompt_words", nargs=-1, metavar="[PROMPT]...")
@resume_options
@click.option("-n", "--name", default="", help="Name of the new session.")
@click.option(
    "--mode",
    type=click.Choice(MODES),
    help="Tool permission mode (approve and smart_approve ask before running tools).",
)
@trust_option
@model_options
@agent_options
@sandbox_option
@familiar_flags
def session_command(
    prompt_words: tuple[str, ...],
    continue_latest: bool,
    resume_id: str | None,
    name: str,
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
    """Chat with the agent interactively; a PROMPT given is sent first."""
    resume, taken_words = resume_request(continue_latest, resume_id)
    prompt_words = (*taken_words, *prompt_words)
    if resume is not None and name:
        raise click.UsageError("--name names a new session; drop it when resuming")
    if not sys.stdin.isatty():
        raise click.UsageError(
            'gosling session needs a terminal; for scripts use `gosling -p "TEXT"` (the same '
            'as `gosling run "TEXT"`), or pipe the prompt into it'
        )
    options = SessionOptions(
        flags={
            "provider": provider,
            "model": model,
            "base_url": base_url,
            "context_limit": context_limit,
            "mode": mode,
            "sandbox": sandbox,
            "sandbox_workspace": sandbox_workspace,
        },
        resume=resume,
        name=name,
        extensions=extensions,
        working_dir=working_dir,
        extras=run_extras(
            append_system_prompt, instructions_file, allowed_tools, disallowed_tools, mcp_configs
        ),
        trust_project=trust_project,
        first_prompt=" ".join(prompt_words),
    )
    from gosling.agent.cli.logs import setup_logging

    setup_logging(warnings_to_stderr=False)
    try:
        code = asyncio.run(run_session(options))
    except KeyboardInterrupt:  # Ctrl-C before the session could take it over
        code = EXIT_INTERRUPTED
    sys.exit(code)


async def _ask_trust(options: SessionOptions, terminal: Terminal, renderer: Renderer) -> bool:
    """The one-time trust question, when the project config sets what only trust applies."""
    from gosling.agent.cli.interactive.prompt import ask_yes_no
    from gosling.agent.cli.interactive.trust_prompt import offer_trust, untrusted_project

    project = untrusted_project(options.working_dir, options.flags)
    if project is None:
        return False
    return await offer_trust(
        project, renderer.info, lambda question: ask_yes_no(terminal, question)
    )


async def run_session(
    options: SessionOptions,
    terminal: Terminal | None = None,
    *,
    provider: Provider | None = None,
    history_file: Path | None = None,
) -> int:
    """Build the runtime, open the session and run the loop until the user leaves."""
    from gosling.agent.cli.interactive.app import InteractiveSession
    from gosling.agent.cli.interactive.render import Renderer
    from gosling.agent.cli.interactive.terminal import Terminal
    from gosling.agent.cli.session_picker import resume_target
    from gosling.agent.config import ConfigError
    from gosling.agent.runtime import build_runtime
    from gosling.prompts.locations import user_dirs
    from gosling.sessions import SessionStoreError

    terminal = terminal or Terminal.from_environment()
    early = Renderer(terminal)
    try:
        check_working_dir(options.working_dir)
    except ConfigError as exc:
        early.error(str(exc))
        return EXIT_USAGE
    trust_project = options.trust_project or await _ask_trust(options, terminal, early)
    try:
        runtime = await build_runtime(
            flags=options.flags,
            working_dir=options.working_dir,
            with_extensions=options.extensions,
            on_extension_event=lambda e: early.info(f"extension {e.extension}: {e.message}"),
            provider=provider,
            extras=options.extras,
            trust_project=trust_project,
        )
    except Exception as exc:
        code = startup_exit_code(exc)
        if code is None:
            raise
        early.error(error_line(str(exc)).removeprefix("error: "))
        return code
    if runtime.sandbox.warning:
        early.info(runtime.sandbox.warning)
    try:
        app = InteractiveSession(
            runtime,
            terminal,
            history_file=history_file or user_dirs().state / "history",
            pinned=frozenset(k for k in ("provider", "model", "mode") if options.flags.get(k)),
        )
        try:
            resume_id = None
            if options.resume is not None:
                assert runtime.store is not None
                resume_id = resume_target(runtime.store, runtime.agent.working_dir, options.resume)
            await app.start(resume_id=resume_id, name=options.name)
        except (LookupError, SessionStoreError) as exc:
            early.error(str(exc))
            return EXIT_ERROR
        return await _until_hangup(app.run(first_prompt=options.first_prompt))
    finally:
        await runtime.aclose()


async def _until_hangup(work: Coroutine[Any, Any, int]) -> int:
    """Run `work`; a closed terminal (SIGHUP) or SIGTERM cancels it, so that running tool
    processes are stopped and the session saved, instead of gosling dying on the spot."""
    import signal

    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    received: list[int] = []

    def stop(sig: int) -> None:
        received.append(sig)
        task.cancel()

    signals = (signal.SIGHUP, signal.SIGTERM)
    for sig in signals:
        loop.add_signal_handler(sig, stop, sig)
    try:
        return await task
    except asyncio.CancelledError:
        if not received:
            raise
        return 128 + received[0]
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)
