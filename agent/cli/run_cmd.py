"""`gosling run`: one prompt, no questions asked, answer on stdout.

Exit codes: 0 ok, 1 provider or runtime error, 2 usage error, 3 max turns reached,
4 a tool call was refused because nobody could approve it, 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gosling.agent.cli.errors import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_MAX_TURNS,
    EXIT_OK,
    EXIT_PERMISSION_DENIED,
    check_working_dir,
    startup_exit_code,
)
from gosling.agent.cli.fast_exit import finish
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
from gosling.agent.cli.session_names import ORIGIN_KEY, session_name_from

if TYPE_CHECKING:
    from gosling.agent.cli.headless import OutputFormat
    from gosling.agent.runtime import RunExtras


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Each cancels the reply, which stops the running tool processes and saves the session."""


def _read_prompt(words: tuple[str, ...], text: str | None, input_file: str | None) -> str:
    from gosling.agent.cli.piped_input import stdin_has_content, with_piped_content

    given = [name for name, v in (("PROMPT", words), ("-t/-p", text), ("-i", input_file)) if v]
    if len(given) > 1:
        raise click.UsageError(f"give the prompt one way, not as {' and '.join(given)}")
    if words or text is not None:
        prompt = " ".join(words) if words else text or ""
        if stdin_has_content(sys.stdin):
            prompt = with_piped_content(prompt, sys.stdin.read())
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
        raise click.UsageError(
            'no prompt: pass it as an argument (gosling run "fix the bug"), with -t TEXT or '
            "-i FILE, or pipe it on stdin"
        )
    if not prompt.strip():
        raise click.UsageError("the prompt is empty")
    return prompt


@click.command("run")
@click.argument("prompt_words", nargs=-1, metavar="[PROMPT]...")
@click.option("-t", "--text", "-p", "--prompt", "text", help="The prompt.")
@click.option("-i", "--input", "input_file", help="Read the prompt from FILE ('-' for stdin).")
@click.option(
    "--mode",
    type=click.Choice(MODES),
    help="Tool permission mode; 'ask' decisions become refusals in a headless run.",
)
@click.option("--max-turns", type=click.IntRange(min=1), help="Model calls allowed (default 1000).")
@resume_options
@click.option("--name", default="", help="Name of the new session (default: from the prompt).")
@click.option("--no-session", is_flag=True, help="Do not store the session.")
@click.option(
    "--output-format",
    type=click.Choice(["text", "json", "stream-json"]),
    default=None,
    help="text (default): the answer on stdout; json: one object; stream-json: events.",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --output-format json.")
@click.option(
    "-o",
    "--output-last-message",
    "last_message_file",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Also write the final answer to FILE.",
)
@click.option("-q", "--quiet", is_flag=True, help="Text mode: print only the answer.")
@trust_option
@model_options
@agent_options
@sandbox_option
@familiar_flags
def run_command(
    prompt_words: tuple[str, ...],
    text: str | None,
    input_file: str | None,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    context_limit: int | None,
    mode: str | None,
    max_turns: int | None,
    continue_latest: bool,
    resume_id: str | None,
    name: str,
    no_session: bool,
    extensions: tuple[str, ...],
    output_format: OutputFormat | None,
    as_json: bool,
    last_message_file: Path | None,
    quiet: bool,
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
    """Run one prompt headlessly and print the answer.

    The prompt comes from PROMPT, -t/-p TEXT, -i FILE or stdin."""
    if provider:  # its SDK imports beside gosling's own start-up (else once config names it)
        from gosling.agent.sdk_warm_up import warm_up_sdk

        warm_up_sdk(provider)
    resume, taken_words = resume_request(continue_latest, resume_id)
    prompt_words = (*taken_words, *prompt_words)
    if resume is not None and no_session:
        raise click.UsageError("resuming needs a stored session; drop --no-session")
    if as_json and output_format not in (None, "json"):
        raise click.UsageError("--json is --output-format json; give one of them")
    prompt = _read_prompt(prompt_words, text, input_file)
    from gosling.agent.cli.logs import setup_logging

    setup_logging(warnings_to_stderr=not quiet)
    request = RunRequest(
        prompt=prompt,
        flags={
            "provider": provider,
            "model": model,
            "base_url": base_url,
            "context_limit": context_limit,
            "mode": mode,
            "max_turns": max_turns,
            "sandbox": sandbox,
            "sandbox_workspace": sandbox_workspace,
        },
        resume=resume,
        name=name or session_name_from(prompt),
        store=not no_session,
        extensions=extensions,
        output_format="json" if as_json else output_format or "text",
        quiet=quiet,
        working_dir=working_dir,
        last_message_file=last_message_file,
        extras=run_extras(
            append_system_prompt, instructions_file, allowed_tools, disallowed_tools, mcp_configs
        ),
        trust_project=trust_project,
    )
    code = asyncio.run(_run(request))
    finish(code)  # everything is flushed and closed by now: skip the interpreter's teardown


@dataclass(frozen=True)
class RunRequest:
    """Everything one `gosling run` was asked to do."""

    prompt: str
    flags: dict[str, Any]
    resume: str | None
    """None: a new session; "": the latest of the working dir; else that id."""
    name: str
    store: bool
    extensions: tuple[str, ...]
    output_format: OutputFormat
    quiet: bool
    working_dir: Path | None
    last_message_file: Path | None
    extras: RunExtras
    trust_project: bool = False
    """Apply the project config as trusted for this run (`--trust-project`)."""
    origin: str = ""
    """What started the run when not a user at a prompt ("batch"): kept with the session
    (`ORIGIN_KEY`), so `gosling sessions list` can leave such sessions out."""


async def _run(request: RunRequest) -> int:
    from gosling.agent.cli.headless import HeadlessRenderer
    from gosling.agent.cli.result_json import RunOutcome
    from gosling.agent.cli.session_picker import resume_target
    from gosling.agent.cli.spinner import Spinner
    from gosling.agent.provider_choice import model_prices
    from gosling.agent.runtime import build_runtime
    from gosling.providers.pricing import cost_usd
    from gosling.sessions import SessionStoreError

    started = time.monotonic()
    spinner = Spinner(sys.stderr)
    renderer = HeadlessRenderer(
        request.output_format, quiet=request.quiet, before_write=spinner.stop
    )

    def failed(message: str, code: int, **known: Any) -> int:
        elapsed = round((time.monotonic() - started) * 1000)
        outcome = RunOutcome("error", error=message, exit_code=code, duration_ms=elapsed, **known)
        renderer.fail(outcome)
        return code

    def extension_event(event: Any) -> None:
        renderer.note(f"extension {event.extension}: {event.message}")

    try:
        check_working_dir(request.working_dir)
        runtime = await build_runtime(
            flags=request.flags,
            working_dir=request.working_dir,
            use_store=request.store,
            with_extensions=request.extensions,
            on_extension_event=extension_event,
            extras=request.extras,
            trust_project=request.trust_project,
            on_warning=None if request.quiet else lambda line: renderer.note(f"warning: {line}"),
        )
    except Exception as exc:
        code = startup_exit_code(exc)
        if code is None:
            raise
        return failed(str(exc), code)
    if runtime.sandbox.warning:
        renderer.note(f"warning: {runtime.sandbox.warning}")
    agent = runtime.agent
    model = runtime.provider.model_config.model
    known = {"provider": runtime.provider.name, "model": model, "sandbox": runtime.sandbox.used}
    try:
        try:
            if request.resume is None:
                session = agent.new_session(request.name)
                if request.origin:
                    session.set_extension_data(ORIGIN_KEY, request.origin)
            else:
                assert runtime.store is not None
                working_dir = (request.working_dir or Path.cwd()).resolve()
                target = resume_target(runtime.store, working_dir, request.resume)
                session = agent.resume_session(target)
        except (SessionStoreError, LookupError) as exc:
            return failed(str(exc).strip("'\""), EXIT_ERROR, **known)
        renderer.start(
            {
                "session_id": session.id,
                "provider": runtime.provider.name,
                "model": model,
                "tools": [spec.name for spec in runtime.tools.specs()],
                "mode": runtime.settings.mode,
                "sandbox": runtime.sandbox.used,
            }
        )
        finished = await _drive(agent.reply(session, request.prompt), renderer, spinner)
        for event in await agent.end_session(session, "other"):
            renderer.event(event)
        session.release()
        session_id = session.id
        if request.resume is None and _nothing_to_resume(runtime.store, session_id, finished):
            assert runtime.store is not None and session_id is not None
            runtime.store.delete(session_id)
            session_id = None
    finally:
        await runtime.aclose()
        if agent.tracing is not None:
            agent.tracing.flush()  # every span is exported before the process may exit
    code = _exit_code(finished)
    outcome = RunOutcome(
        finished.stop_reason,
        final_text=finished.final_text,
        session_id=session_id,
        num_turns=finished.turns,
        usage=finished.usage,
        error=finished.error,
        denials=tuple(renderer.denials),
        duration_ms=round((time.monotonic() - started) * 1000),
        duration_api_ms=round(renderer.api_ms),
        total_cost_usd=cost_usd(model, finished.usage, model_prices(runtime.settings)),
        exit_code=code,
        **known,
        hook_decisions=tuple(renderer.hook_decisions),
    )
    renderer.finish(outcome)
    if request.last_message_file is not None:
        _write_last_message(request.last_message_file, finished.final_text)
    _say_how_to_continue(session_id, finished, renderer.err)
    return code


def _nothing_to_resume(store: Any, session_id: str | None, finished: Any) -> bool:
    """A new session whose first turn failed before any reply holds only the prompt: it is
    removed, so failed one-off runs do not fill `gosling sessions list`."""
    if store is None or session_id is None or finished.stop_reason != "error":
        return False
    messages = store.load_messages(session_id)
    return not any(message.role == "assistant" for message in messages)


def _write_last_message(path: Path, text: str) -> None:
    from gosling.redact import redact

    try:
        path.write_text(redact(text.rstrip("\n")) + "\n", encoding="utf-8")
    except OSError as exc:
        click.echo(f"error: cannot write the final answer to {path}: {exc}", err=True)


def _say_how_to_continue(session_id: str | None, finished: Any, err: Any) -> None:
    """One stderr line when the run stopped before the task was done."""
    if session_id is None:
        return
    if finished.stop_reason == "max_turns":
        err.write(
            f"gosling: stopped after {finished.turns} model calls (--max-turns); session "
            f"{session_id} is saved; continue it with: gosling run -r {session_id} "
            '"keep going"\n'
        )
    elif finished.stop_reason == "cancelled":
        err.write(
            f"gosling: interrupted; session {session_id} is saved; continue it with: "
            f'gosling run -r {session_id} "keep going"\n'
        )
    err.flush()


async def _drive(events: Any, renderer: Any, spinner: Any) -> Any:
    """Consume the reply, cancelling it cleanly on SIGINT/SIGTERM."""
    from gosling.agent.events import MessageAdded, TextDelta, ToolCall, TurnFinished

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, task.cancel)
    finished: TurnFinished | None = None
    try:
        spinner.start()
        async for event in events:
            if isinstance(event, TextDelta):
                spinner.stop()
            if isinstance(event, TurnFinished):
                finished = event
            renderer.event(event)
            if isinstance(event, MessageAdded):
                spinner.start("working")
            elif isinstance(event, ToolCall):
                spinner.start(f"running {event.name}")
    finally:
        spinner.stop()
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)
    assert finished is not None
    return finished


def _exit_code(finished: Any) -> int:
    if finished.stop_reason == "cancelled":
        return EXIT_INTERRUPTED
    if finished.stop_reason in (
        "error",
        "context_exceeded",
        "hook_blocked",
    ):  # see ERROR_STOP_REASONS
        return EXIT_ERROR
    if finished.stop_reason == "max_turns":
        return EXIT_MAX_TURNS
    if finished.permission_denied:
        return EXIT_PERMISSION_DENIED
    return EXIT_OK


async def run_json(
    prompt: str,
    flags: dict[str, Any],
    *,
    name: str = "",
    extensions: tuple[str, ...] = (),
    working_dir: Path | None = None,
    origin: str = "",
    trace_link: str | None = None,
) -> int:
    """`gosling run --output-format json` in-process: the result object on stdout, errors on
    stderr, the exit code returned. `gosling batch` workers run every task through this
    (`trace_link`: the batch's span, which every turn's trace links to)."""
    from gosling.agent.runtime import RunExtras

    request = RunRequest(
        prompt=prompt,
        flags=flags,
        resume=None,
        name=name or session_name_from(prompt),
        store=True,
        extensions=extensions,
        output_format="json",
        quiet=True,
        working_dir=working_dir,
        last_message_file=None,
        extras=RunExtras(trace_link=trace_link),
        origin=origin,
    )
    return await _run(request)
