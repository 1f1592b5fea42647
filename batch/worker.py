"""One task, run inside a worker process (a local pool process or a Ray worker).

The run itself is `gosling run --output-format json`, called in-process
(`agent.cli.run_cmd.run_json`), so a batch task behaves exactly as the same prompt run by
hand. A worker runs many tasks one after another and pays the imports once (`warm_up`);
each task gets its own working directory, its own session in the session store and its own
captured output.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import os
import socket
import time
import traceback
from collections.abc import Iterable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gosling.agent.cli.errors import EXIT_ERROR, EXIT_INTERRUPTED
from gosling.batch.tasks import TaskSpec
from gosling.batch.workdir import PrepareFailed, PrepareTimedOut, prepare_working_dir

if TYPE_CHECKING:
    # The driver imports this module for `Job` and `TaskOutcome`; it needs no provider code.
    from gosling.providers.retry import SharedBackoff

EXIT_TIMEOUT = 124
"""A task that ran out of its `timeout_s` (as `timeout(1)` reports it)."""


@dataclass(frozen=True)
class RunDefaults:
    """Batch-wide settings a task line may override."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    mode: str | None = None
    max_turns: int | None = None
    timeout_s: float | None = None
    trace_link: str | None = None
    """The batch's span (`traceparent`): every task's traces link to it."""


@dataclass(frozen=True)
class Job:
    """What a worker is sent: the task, which attempt this is, and where to work."""

    task: TaskSpec
    work_root: str
    defaults: RunDefaults = field(default_factory=RunDefaults)
    attempt: int = 1


@dataclass(frozen=True)
class TaskOutcome:
    """What a worker sends back. `result` is the run's JSON object plus the worker's fields;
    `session_jsonl` the exported session (None when no session was made)."""

    task_id: str
    exit_code: int
    result: dict[str, Any]
    session_jsonl: str | None
    log: str

    @property
    def interrupted(self) -> bool:
        """Cancelled by the batch (a second Ctrl-C): not a finished task."""
        return self.exit_code == EXIT_INTERRUPTED


class _CurrentStderr(logging.Handler):
    """Warnings go to whatever `sys.stderr` is now: the running task's log."""

    def emit(self, record: logging.LogRecord) -> None:
        import sys

        sys.stderr.write(self.format(record) + "\n")


def sdk_modules(providers: Iterable[str | None]) -> tuple[str, ...]:
    """The SDKs these providers speak through (a task with no provider may pick any), so a
    worker imports only those: each costs about a second of CPU."""
    from gosling.providers.errors import ProviderConfigError
    from gosling.providers.factory import PROVIDERS, resolve_provider_name

    needed: set[str] = set()
    for name in providers:
        try:
            api = PROVIDERS[resolve_provider_name(name)].api if name else None
        except ProviderConfigError:
            api = None
        needed |= {"anthropic"} if api == "anthropic" else {"openai"} if api else ALL_SDKS
    return tuple(sorted(needed))


ALL_SDKS = frozenset({"anthropic", "openai"})

RUN_MODULES = (
    "gosling.batch.worker",
    "gosling.batch.local_pool",
    "gosling.batch.backoff",
    "multiprocessing.synchronize",
    "multiprocessing.popen_forkserver",
    "gosling.agent.cli.run_cmd",
    "gosling.agent.cli.headless",
    "gosling.agent.cli.session_cmd",
    "gosling.agent.cli.spinner",
    "gosling.agent.runtime",
    "jinja2",
    "anyio",
    "anyio._backends._asyncio",
    "httpcore2",
    "h11",
)
"""What every run imports, beyond the SDKs: preloaded once (the forkserver) per batch."""

ADAPTERS = {
    "anthropic": ("anthropic", "gosling.providers.anthropic"),
    "openai": (
        "openai",
        "gosling.providers.openai_chat",
        "gosling.providers.openai_responses",
        "gosling.providers.openai_compatible",
    ),
}


def modules_to_preload(sdks: Iterable[str]) -> list[str]:
    return [*RUN_MODULES, *(module for sdk in sdks for module in ADAPTERS[sdk])]


_warmed: set[str] = set()
"""What `warm_up` has done in this process: "" for the common part, then each SDK."""


def warm_up(sdks: Iterable[str] = ALL_SDKS) -> None:
    """Pay once per process what every task needs: the SDKs, the runtime, logging, the
    tokenizer, the TLS context, the template engine, each SDK's first stream. A worker
    forked from a process that did it (the local pool's forkserver) finds it done."""
    import importlib

    from gosling.batch.rehearsal import rehearse

    todo = tuple(sorted(set(sdks) - _warmed))
    for module in modules_to_preload(todo):
        importlib.import_module(module)
    if "" not in _warmed:
        from gosling.agent.cli.logs import setup_logging
        from gosling.context_mgmt.tokens import TokenCounter
        from gosling.prompts.templating import render_source
        from gosling.providers.sdk_provider import shared_tls_context

        setup_logging(warnings_to_stderr=False)
        handler = _CurrentStderr(logging.WARNING)
        handler.setFormatter(logging.Formatter("warning: %(message)s"))
        logging.getLogger().addHandler(handler)
        TokenCounter().count_text("warm")
        shared_tls_context()
        render_source("{{ warm }}", warm="")  # jinja's environment and lexer
        _warm_first_run()
        _warmed.add("")
    rehearse(todo)
    _warmed.update(todo)


def _warm_first_run() -> None:
    """What a run otherwise does once per process, on its first task: probe the sandbox
    (a subprocess), compile the system prompt's template, build the built-in tools'
    argument models. Each result depends on the machine and the code, never on a task.
    Best effort: a step that fails here (a user's prompt template that does not parse)
    fails again in every task, which reports it with its fix."""
    from gosling.agent.sandbox.probe import bwrap_status
    from gosling.agent.system_prompt import build_system_prompt
    from gosling.agent.tools.developer import developer_extension
    from gosling.agent.tools.recall import context_extension

    def system_prompt() -> None:
        build_system_prompt(
            working_dir=Path.cwd(),
            hints="",
            tool_names=[],
            chat_mode=False,
            extension_instructions={},
        )

    for step in (bwrap_status, developer_extension, context_extension, system_prompt):
        with contextlib.suppress(Exception):
            step()


def _flags(task: TaskSpec, defaults: RunDefaults) -> dict[str, Any]:
    def pick(name: str) -> Any:
        value = getattr(task, name)
        return value if value is not None else getattr(defaults, name)

    return {
        "provider": pick("provider"),
        "model": pick("model"),
        "base_url": pick("base_url"),
        "context_limit": None,
        "mode": pick("mode"),
        "max_turns": pick("max_turns"),
        # Never the git root around the task's directory: results.jsonl and the other
        # tasks' directories are there.
        "sandbox_workspace": "working-dir",
    }


def failure_payload(error: str, stop_reason: str = "error") -> dict[str, Any]:
    """The result object of a task that failed outside the run (setup, timeout, a crash)."""
    from gosling.agent.cli.result_json import RunOutcome, result_object

    return result_object(RunOutcome(stop_reason, error=error, exit_code=EXIT_ERROR))


async def _headless(
    task: TaskSpec,
    flags: dict[str, Any],
    work: Path,
    deadline: float | None,
    defaults: RunDefaults | None = None,
) -> tuple[int, bool]:
    """The run's exit code, and whether the task's timeout cut it short."""
    from gosling.agent.cli.run_cmd import run_json

    me = asyncio.current_task()
    assert me is not None
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        me.cancel()

    timer = None
    if deadline is not None:
        loop = asyncio.get_running_loop()
        timer = loop.call_later(max(0.0, deadline - time.monotonic()), expire)
    try:
        code = await run_json(
            task.prompt,
            flags,
            name=f"batch {task.id}",
            extensions=task.extensions,
            working_dir=work,
            origin="batch",
            trace_link=defaults.trace_link if defaults is not None else None,
        )
    except asyncio.CancelledError:
        if not expired:
            raise
        code = EXIT_INTERRUPTED
    finally:
        if timer is not None:
            timer.cancel()
    return code, expired


def _last_json_object(text: str) -> dict[str, Any] | None:
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "the run stopped without a result"


def _session_files(session_id: str) -> tuple[str, dict[str, int]]:
    """The exported session and its token totals (every model call, compactions included)."""
    from gosling.agent.runtime import open_store
    from gosling.sessions import export_session

    # Opened per task and closed before the next run opens its own (see batch/README.md).
    with open_store() as store:
        text = export_session(store, session_id, "jsonl")
        totals = store.get(session_id).tokens
    tokens = {
        "input": totals.input_tokens,
        "output": totals.output_tokens,
        "cache_read": totals.cache_read_tokens,
        "cache_write": totals.cache_write_tokens,
        "total": totals.total_tokens,
        "model_calls": totals.model_calls,
    }
    return text, tokens


def task_timeout(job: Job) -> float | None:
    """The task's `timeout_s`, else the batch's `--timeout`."""
    return job.task.timeout_s if job.task.timeout_s is not None else job.defaults.timeout_s


def _no_tokens() -> dict[str, int]:
    return dict.fromkeys(
        ("input", "output", "cache_read", "cache_write", "total", "model_calls"), 0
    )


def _result(
    job: Job, payload: dict[str, Any], tokens: dict[str, int], worker: str, timed_out: bool
) -> dict[str, Any]:
    return {
        **payload,
        "tokens": tokens,
        "working_dir": str(Path(job.work_root) / job.task.id),
        "worker": worker,
        "timed_out": timed_out,
    }


def killed_past_timeout(job: Job, pid: int) -> TaskOutcome:
    """The result of a task whose worker did not stop at the task's timeout and was killed
    (a tool blocking in native code, a stopped process): timed out, as if it had stopped."""
    timeout = task_timeout(job)
    error = f"timed out after {timeout:g} s; the worker did not stop, so it was killed"
    payload = failure_payload(error)
    result = _result(job, payload, _no_tokens(), f"{socket.gethostname()}:{pid}", True)
    return TaskOutcome(job.task.id, EXIT_TIMEOUT, result, None, "")


def run_task(job: Job, backoff: SharedBackoff | None = None) -> TaskOutcome:
    """Run one task start to finish; every failure of the task itself becomes its result
    (only the death of the process running it escapes, and the batch retries that)."""
    from gosling.agent.tools.spill import remove_session_tmp
    from gosling.providers.retry import sharing_backoff

    task = job.task
    started = time.monotonic()
    timeout = task_timeout(job)
    deadline = started + timeout if timeout is not None else None
    work = Path(job.work_root) / task.id
    log = io.StringIO()
    session_jsonl: str | None = None
    tokens = _no_tokens()
    timed_out = False
    try:
        prepare_working_dir(task, work, log, deadline)
        out = io.StringIO()
        with redirect_stdout(out), redirect_stderr(log), sharing_backoff(backoff):
            code, timed_out = asyncio.run(
                _headless(task, _flags(task, job.defaults), work, deadline, job.defaults)
            )
        payload = _last_json_object(out.getvalue()) or failure_payload(_last_line(log.getvalue()))
        if payload.get("session_id"):
            session_jsonl, tokens = _session_files(str(payload["session_id"]))
            # The task's `/tmp` is scratch: hundreds of tasks must not keep a week of it each
            # (the session, its export and the working dir stay).
            remove_session_tmp(str(payload["session_id"]))
    except PrepareTimedOut as exc:
        code, timed_out, payload = EXIT_TIMEOUT, True, failure_payload(str(exc))
    except PrepareFailed as exc:
        code, payload = EXIT_ERROR, failure_payload(str(exc))
    except Exception as exc:
        log.write(traceback.format_exc())
        code, payload = EXIT_ERROR, failure_payload(f"internal error: {exc!r}")
    if timed_out:
        code = EXIT_TIMEOUT
        payload["error"] = payload.get("error") or f"timed out after {timeout:g} s"
    result = _result(job, payload, tokens, f"{socket.gethostname()}:{os.getpid()}", timed_out)
    return TaskOutcome(task.id, code, result, session_jsonl, log.getvalue())
