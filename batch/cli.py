"""`gosling batch TASKS.jsonl -o OUT_DIR`: run every task headlessly, locally or on Ray.

Exit codes: 0 every task succeeded, 1 some task failed (or could not run), 2 usage error
(bad task lines, bad options), 130 interrupted (finished results are kept; rerun to go on).
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gosling.agent.cli.errors import EXIT_USAGE
from gosling.agent.cli.options import MODES

if TYPE_CHECKING:
    from gosling.agent.telemetry.batch_span import BatchTrace


def _limits(specs: tuple[str, ...]) -> dict[str, int]:
    """`N` (every provider) or `PROVIDER=N`, repeatable."""
    limits: dict[str, int] = {}
    for spec in specs:
        name, _, number = spec.rpartition("=")
        try:
            value = int(number)
        except ValueError:
            value = 0
        if value < 1:
            raise click.BadParameter(
                f"{spec!r}: use N or PROVIDER=N with N >= 1", param_hint="--max-concurrency"
            )
        limits[name or "*"] = value
    return limits


def _forwarded_env(names: tuple[str, ...]) -> dict[str, str]:
    import os

    missing = [n for n in names if n not in os.environ]
    if missing:
        raise click.BadParameter(
            f"not set in this environment: {', '.join(missing)}", param_hint="--ray-env"
        )
    return {name: os.environ[name] for name in names}


def _require_data_dir() -> None:
    """The local workers share this machine's session store: a data directory that cannot be
    made is one error before any task runs, not the same error once per task."""
    from gosling.prompts.locations import user_dirs
    from gosling.sessions import DEFAULT_FILENAME, SessionStoreError
    from gosling.sessions.sqlite_store import make_store_directory

    try:
        make_store_directory(user_dirs().data / DEFAULT_FILENAME)
    except SessionStoreError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


def _start_forkserver_early(tasks_file: Path, provider: str | None) -> None:
    """The local pool's forkserver imports the SDKs for about 1.5 s; start it before the
    driver's own imports and the task file's checks, which then run alongside."""
    from gosling.batch import forkserver

    providers = forkserver.providers_at_a_glance(tasks_file, provider)
    if providers is not None and forkserver.available():
        forkserver.start(providers)


@click.command("batch")
@click.argument(
    "tasks_file", metavar="TASKS.jsonl", type=click.Path(dir_okay=False, path_type=Path)
)
@click.option(
    "-o",
    "--output",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory for results.jsonl, sessions/, logs/ and the tasks' working dirs (work/).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    help="Tasks run at once (default 4 locally; on Ray, what the CPUs allow).",
)
@click.option(
    "--ray",
    "ray_address",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[ADDRESS]",
    help="Run on Ray: alone, a local instance; or join ADDRESS (auto, ray://host:10001).",
)
@click.option(
    "--retries",
    type=click.IntRange(min=0),
    default=2,
    show_default=True,
    help="Retries of a task whose worker or node died.",
)
@click.option(
    "--max-concurrency",
    "concurrency",
    multiple=True,
    metavar="[PROVIDER=]N",
    help="Most tasks at once per provider. Repeatable.",
)
@click.option(
    "--cpus-per-task",
    type=click.FloatRange(min=0, min_open=True),
    default=1.0,
    show_default=True,
    help="CPUs each task declares to Ray.",
)
@click.option(
    "--ray-env",
    "ray_env",
    multiple=True,
    metavar="NAME",
    help="Forward this environment variable to the Ray workers. Repeatable.",
)
@click.option("--provider", help="Default provider of tasks that name none.")
@click.option("--model", help="Default model.")
@click.option("--base-url", help="Default base URL of the provider's API.")
@click.option(
    "--mode", type=click.Choice(MODES), help="Default permission mode ('ask' becomes a refusal)."
)
@click.option(
    "--max-turns", type=click.IntRange(min=1), help="Default model calls allowed per task."
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=0, min_open=True),
    help="Default seconds per task.",
)
@click.option(
    "--retry-failed",
    is_flag=True,
    help="Run again the tasks whose result in OUT_DIR failed; keep the ones that succeeded.",
)
def batch_command(
    tasks_file: Path,
    out_dir: Path,
    workers: int | None,
    ray_address: str | None,
    retries: int,
    concurrency: tuple[str, ...],
    cpus_per_task: float,
    ray_env: tuple[str, ...],
    provider: str | None,
    model: str | None,
    base_url: str | None,
    mode: str | None,
    max_turns: int | None,
    timeout_s: float | None,
    retry_failed: bool,
) -> None:
    """Run every task of TASKS.jsonl headlessly; results go to OUT_DIR/results.jsonl."""
    limits = _limits(concurrency)
    forward = _forwarded_env(ray_env)
    if ray_address is None:
        _start_forkserver_early(tasks_file, provider)
    from gosling.batch.precheck import batch_problems
    from gosling.batch.progress import progress_for
    from gosling.batch.results import OutputDir, OutputInUse
    from gosling.batch.scheduler import Backend, Scheduler
    from gosling.batch.tasks import TaskFileError, load_tasks
    from gosling.batch.worker import RunDefaults

    try:
        tasks = load_tasks(tasks_file)
    except TaskFileError as exc:
        for problem in exc.problems:
            click.echo(f"error: {problem}", err=True)
        click.echo(f"error: no task was run; fix the line(s) above in {tasks_file}", err=True)
        sys.exit(EXIT_USAGE)
    defaults = RunDefaults(provider, model, base_url, mode, max_turns, timeout_s)
    problems = batch_problems(tasks, defaults)
    if problems:
        for problem in problems:
            click.echo(f"error: {problem}", err=True)
        click.echo("error: no task was run; fix the option(s) above", err=True)
        sys.exit(EXIT_USAGE)
    out = OutputDir(out_dir)
    try:
        out.lock()
        if retry_failed:
            again = out.forget_failed()
            click.echo(f"gosling batch: running {len(again)} failed task(s) again", err=True)
        out.finished()
    except (OSError, ValueError, OutputInUse) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    backend: Backend
    if ray_address is None:
        from gosling.batch.local_pool import LocalPool

        _require_data_dir()
        providers = sorted({task.provider or provider for task in tasks}, key=str)
        backend = LocalPool(workers or 4, out.root / "logs", providers)
    else:
        from gosling.batch.ray_backend import RayBackend, RayUnavailable

        try:
            backend = RayBackend(
                ray_address or None,
                cpus_per_task=cpus_per_task,
                max_in_flight=workers,
                forward_env=forward,
            )
        except RayUnavailable as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
    trace = _batch_trace(len(tasks), out.root)
    defaults = RunDefaults(
        provider,
        model,
        base_url,
        mode,
        max_turns,
        timeout_s,
        trace_link=trace.traceparent if trace is not None else None,
    )
    scheduler = Scheduler(
        tasks,
        backend,
        out,
        progress_for(sys.stderr),
        defaults=defaults,
        retries=retries,
        max_concurrency=limits,
    )

    def interrupt(signum: int, frame: Any) -> None:
        scheduler.interrupt()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, interrupt)
    summary = scheduler.run()
    if trace is not None:
        trace.end(summary.exit_code)
    sys.exit(summary.exit_code)


def _batch_trace(tasks: int, out_dir: Path) -> BatchTrace | None:
    """The batch's own span, which every task's traces link to; None when tracing is off
    (then nothing of OpenTelemetry is imported). The driver reads `[telemetry]` from the
    user's config file with tomllib only: the full settings stay the workers' business."""
    import tomllib

    from gosling.agent.telemetry.settings import FileTelemetry, trace_settings
    from gosling.prompts.locations import user_dirs

    table: Any = {}
    try:
        text = (user_dirs().config / "config.toml").read_text(encoding="utf-8")
        table = tomllib.loads(text).get("telemetry", {}) if "telemetry" in text else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        pass
    config = trace_settings(FileTelemetry.of(table))
    if config is None:
        return None
    from gosling.agent.telemetry.batch_span import BatchTrace

    return BatchTrace(config, tasks, out_dir)
