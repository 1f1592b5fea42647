"""`gosling run`: one prompt, no questions asked, answer on stdout.

Exit codes: 0 ok, 1 provider or runtime error, 2 usage error, 3 max turns reached,
4 a tool call was refused because nobody could approve it, 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

import click

from agent.cli.options import MODES, model_options

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_MAX_TURNS = 3
EXIT_PERMISSION_DENIED = 4
EXIT_INTERRUPTED = 130


def _read_prompt(text: str | None, input_file: str | None) -> str:
    if text is not None and input_file is not None:
        raise click.UsageError("give the prompt with -t or -i, not both")
    if text is not None:
        prompt = text
    elif input_file is not None:
        if input_file == "-":
            prompt = sys.stdin.read()
        else:
            try:
                prompt = Path(input_file).read_text(encoding="utf-8")
            except OSError as exc:
                raise click.UsageError(f"cannot read prompt file {input_file}: {exc}") from exc
    elif not sys.stdin.isatty():
        prompt = sys.stdin.read()
    else:
        raise click.UsageError("no prompt: pass -t TEXT, -i FILE, or pipe it on stdin")
    if not prompt.strip():
        raise click.UsageError("the prompt is empty")
    return prompt


@click.command("run")
@click.option("-t", "--text", help="The prompt.")
@click.option("-i", "--input", "input_file", help="Read the prompt from FILE ('-' for stdin).")
@click.option(
    "--mode",
    type=click.Choice(MODES),
    help="Tool permission mode; 'ask' decisions become refusals in a headless run.",
)
@click.option("--max-turns", type=click.IntRange(min=1), help="Model calls allowed (default 1000).")
@click.option("--resume", "resume_id", metavar="ID", help="Continue a stored session.")
@click.option("--name", default="", help="Name of the new session.")
@click.option("--no-session", is_flag=True, help="Do not store the session.")
@click.option(
    "--output-format",
    type=click.Choice(["text", "json", "stream-json"]),
    default="text",
    show_default=True,
)
@click.option("-q", "--quiet", is_flag=True, help="Text mode: print only the answer.")
@model_options
def run_command(
    text: str | None,
    input_file: str | None,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    context_limit: int | None,
    mode: str | None,
    max_turns: int | None,
    resume_id: str | None,
    name: str,
    no_session: bool,
    extensions: tuple[str, ...],
    output_format: str,
    quiet: bool,
    working_dir: Path | None,
) -> None:
    """Run one prompt headlessly and print the answer."""
    if resume_id and no_session:
        raise click.UsageError("--resume needs a stored session; drop --no-session")
    prompt = _read_prompt(text, input_file)
    from agent.cli.logs import setup_logging

    setup_logging(warnings_to_stderr=not quiet)
    flags = {
        "provider": provider,
        "model": model,
        "base_url": base_url,
        "context_limit": context_limit,
        "mode": mode,
        "max_turns": max_turns,
    }
    code = asyncio.run(
        _run(
            prompt,
            flags,
            resume_id,
            name,
            no_session,
            extensions,
            output_format,
            quiet,
            working_dir,
        )
    )
    sys.exit(code)


async def _run(
    prompt: str,
    flags: dict[str, Any],
    resume_id: str | None,
    name: str,
    no_session: bool,
    extensions: tuple[str, ...],
    output_format: Any,
    quiet: bool,
    working_dir: Path | None,
) -> int:
    from agent.cli.headless import HeadlessRenderer
    from agent.cli.spinner import Spinner
    from agent.config import ConfigError
    from agent.runtime import build_runtime
    from providers import ProviderError
    from sessions import SessionStoreError

    renderer = HeadlessRenderer(output_format, quiet=quiet)

    def extension_event(event: Any) -> None:
        renderer.err.write(f"extension {event.extension}: {event.message}\n")

    try:
        runtime = await build_runtime(
            flags=flags,
            working_dir=working_dir,
            use_store=not no_session,
            with_extensions=extensions,
            on_extension_event=extension_event,
        )
    except (ConfigError, ValueError) as exc:
        click.echo(f"error: {exc}", err=True)
        return EXIT_USAGE
    except (ProviderError, SessionStoreError) as exc:
        click.echo(f"error: {exc}", err=True)
        return EXIT_ERROR
    agent = runtime.agent
    try:
        try:
            session = agent.resume_session(resume_id) if resume_id else agent.new_session(name)
        except SessionStoreError as exc:
            click.echo(f"error: {exc}", err=True)
            return EXIT_ERROR
        renderer.start(
            {
                "session_id": session.id,
                "provider": runtime.provider.name,
                "model": runtime.provider.model_config.model,
                "tools": [spec.name for spec in runtime.tools.specs()],
                "mode": runtime.settings.mode,
            }
        )
        finished = await _drive(agent.reply(session, prompt), renderer, Spinner(renderer.err))
        session.release()
    finally:
        await runtime.aclose()
    renderer.finish(session.id, finished)
    return _exit_code(finished)


async def _drive(events: Any, renderer: Any, spinner: Any) -> Any:
    """Consume the reply, cancelling it cleanly on SIGINT/SIGTERM."""
    from agent.events import MessageAdded, TextDelta, TurnFinished

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, task.cancel)
    finished: TurnFinished | None = None
    try:
        spinner.start()
        async for event in events:
            if isinstance(event, TextDelta):
                spinner.stop()
            elif isinstance(event, MessageAdded):
                spinner.start()
            if isinstance(event, TurnFinished):
                finished = event
            renderer.event(event)
    finally:
        spinner.stop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    assert finished is not None
    return finished


def _exit_code(finished: Any) -> int:
    if finished.stop_reason == "cancelled":
        return EXIT_INTERRUPTED
    if finished.stop_reason in ("error", "context_exceeded"):
        return EXIT_ERROR
    if finished.stop_reason == "max_turns":
        return EXIT_MAX_TURNS
    if finished.permission_denied:
        return EXIT_PERMISSION_DENIED
    return EXIT_OK
