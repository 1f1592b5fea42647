"""The local pool's forkserver, started as the very first thing `gosling batch` does.

The forkserver is where the workers' start-up is paid, once: it imports the runtime and the
SDKs and warms them up (`batch.prefork`), then forks a worker per slot, each inheriting all of
it copy-on-write. That import is the longest single step of a local batch (about 1.5 s of
CPU), so it starts before the driver has imported its own modules or checked the task file,
and runs on the other core meanwhile. This module is imported by the driver first; keep it to
the standard library.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

PRELOAD_MODULE = "gosling.batch.prefork"
PROVIDERS_ENV = "GOSLING_BATCH_PROVIDERS"
"""How the forkserver learns the tasks' providers (and so which SDKs to import); set only
while it is being spawned, and removed from its environment by `batch.prefork`."""


def available() -> bool:
    import multiprocessing

    return "forkserver" in multiprocessing.get_all_start_methods()


def start(providers: Iterable[str | None]) -> None:
    """Start the forkserver, which imports and warms up what these providers' tasks need (a
    None provider: the automatic choice, which may be any SDK). A no-op once it runs."""
    import multiprocessing.forkserver

    os.environ[PROVIDERS_ENV] = json.dumps(sorted(set(providers), key=str))
    try:
        multiprocessing.forkserver.set_forkserver_preload([PRELOAD_MODULE])
        multiprocessing.forkserver.ensure_running()
    finally:
        del os.environ[PROVIDERS_ENV]


def preloaded_providers() -> list[str | None]:
    """Inside the forkserver: the providers `start` was given."""
    value = json.loads(os.environ.pop(PROVIDERS_ENV, "[null]"))
    return [p if isinstance(p, str) else None for p in value]


def providers_at_a_glance(tasks_file: Path, default: str | None) -> list[str | None] | None:
    """The providers the task file names, read without validating it (that comes next, in
    parallel with the forkserver's start); None when a line is not even a JSON object, so
    nothing is started for a file that will be refused."""
    found: set[str | None] = set()
    try:
        with tasks_file.open(encoding="utf-8") as lines:
            for line in lines:
                if not line.strip():
                    continue
                task = json.loads(line)
                if not isinstance(task, dict):
                    return None
                name = task.get("provider")
                found.add(name if isinstance(name, str) and name else default)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    return sorted(found, key=str) if found else None
