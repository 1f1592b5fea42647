"""Ray, when asked: each task is a Ray task with declared CPUs, run by Ray's workers
(which Ray reuses from task to task, so the imports are paid once per worker process).

`--ray` starts a local Ray instance (or joins the one `RAY_ADDRESS` names); `--ray ADDRESS`
joins a cluster (`auto`, `ray://host:10001`, `host:6379`). On a cluster gosling's own
packages reach the workers through Ray's runtime environment (`py_modules`), so every node
runs the driver's version of gosling; its dependencies must be installed on the nodes
(`pip install 'gosling-agent[ray]'`). Environment variables are not forwarded unless named
with `--ray-env` (provider keys stay where you put them).

Ray's own retries are off: a task whose worker or node died comes back as `Lost` and the
scheduler retries it, the same rule as the local pool. `ray` is imported only here, and only
when a batch runs on Ray.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Mapping
from functools import cache
from typing import Any

from gosling.agent.cli.errors import EXIT_ERROR
from gosling.batch.backoff import BackoffClock, RayBackoff
from gosling.batch.scheduler import Finished, Lost
from gosling.batch.worker import Job, TaskOutcome, failure_payload

PROJECT_PACKAGES = ("gosling",)
"""The top-level packages of gosling-agent (its one import root), shipped to the workers."""


class RayUnavailable(Exception):
    """Ray is not installed, or the cluster cannot be reached; the message says what to do."""


@cache
def _warm(sdks: tuple[str, ...]) -> None:
    from gosling.batch.worker import warm_up

    warm_up(sdks)


def run_on_ray_worker(job: Job, backoff: RayBackoff) -> TaskOutcome:
    """The Ray task: warm the worker process (once per SDK set), then run the job."""
    from gosling.batch.worker import run_task, sdk_modules

    _warm(sdk_modules([job.task.provider or job.defaults.provider]))
    return run_task(job, backoff)


def runtime_env(forward_env: Mapping[str, str], *, ship_code: bool) -> dict[str, Any]:
    """What Ray sets up for the workers: gosling's packages when joining a cluster (a local
    instance started here runs this very interpreter and its packages), and the variables
    named with `--ray-env`."""
    env: dict[str, Any] = {}
    if forward_env:
        env["env_vars"] = dict(forward_env)
    if not ship_code:
        return env
    modules = []
    for name in PROJECT_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise RayUnavailable(f"cannot find gosling's package {name!r} to ship to Ray")
        modules.append(next(iter(spec.submodule_search_locations)))
    env.update(py_modules=modules, excludes=["__pycache__", "*.pyc"])
    return env


def _import_ray(local: bool) -> Any:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if local:
        # A local instance listens on loopback only: nothing on the network can reach it.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailable(
            "Ray is not installed; install it with: pip install 'gosling-agent[ray]'"
        ) from exc
    return ray


class RayBackend:
    def __init__(
        self,
        address: str | None,
        *,
        cpus_per_task: float = 1.0,
        max_in_flight: int | None = None,
        forward_env: Mapping[str, str] | None = None,
    ) -> None:
        local = address is None and not os.environ.get("RAY_ADDRESS")
        ray = _import_ray(local=local)
        self._ray = ray
        self._owns_connection = not ray.is_initialized()
        if self._owns_connection:
            try:
                ray.init(
                    address=address,
                    include_dashboard=False if address is None else None,
                    log_to_driver=False,
                    logging_level=logging.WARNING,
                    runtime_env=runtime_env(forward_env or {}, ship_code=not local),
                )
            except (OSError, RuntimeError, ValueError) as exc:  # OSError: ConnectionError too
                where = address or "a new local instance"
                raise RayUnavailable(f"cannot start or join Ray at {where}: {exc}") from exc
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        fits = max(1, int(cpus / cpus_per_task))
        self._slots = min(fits, max_in_flight) if max_in_flight else fits
        self._task = ray.remote(run_on_ray_worker).options(
            num_cpus=cpus_per_task, max_retries=0, retry_exceptions=False
        )
        self._backoff = RayBackoff(ray.remote(BackoffClock).options(num_cpus=0).remote())
        self._running: dict[Any, Job] = {}

    @property
    def slots(self) -> int:
        return self._slots

    def submit(self, job: Job) -> None:
        self._running[self._task.remote(job, self._backoff)] = job

    def poll(self, timeout: float) -> list[Finished | Lost]:
        if not self._running:
            return []
        ray = self._ray
        refs = list(self._running)
        ready, _ = ray.wait(refs, num_returns=1, timeout=timeout)
        if ready:
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
        events: list[Finished | Lost] = []
        for ref in ready:
            job = self._running.pop(ref)
            try:
                outcome = ray.get(ref)
            except ray.exceptions.RayTaskError as exc:
                # The task raised: it failed by itself, so it is a result, not a retry.
                error = f"internal error: {exc.cause!r}"
                outcome = TaskOutcome(job.task.id, EXIT_ERROR, failure_payload(error), None, "")
            except ray.exceptions.RayError as exc:
                events.append(Lost(job, f"Ray lost the task ({type(exc).__name__})"))
                continue
            events.append(Finished(job, outcome))
        return events

    def cancel_running(self) -> None:
        for ref in self._running:
            self._ray.cancel(ref)

    def close(self) -> None:
        if self._owns_connection:
            self._ray.shutdown()
