"""`run_sync`: run one of gosling's coroutines from synchronous code.

Without a running event loop in this thread it is `asyncio.run`. Inside one (Jupyter, a web
server's handler, any `async def` calling synchronous code) `asyncio.run` would fail, and
waiting on the caller's own loop would deadlock it; the coroutine then runs to completion on
a worker thread with a loop of its own, and this thread waits for it. Objects bound to the
caller's loop (an SDK client created in it) must not be used by that coroutine: build them
inside, or use the async form.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """The result of `coroutine` (its exception re-raised here)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome: dict[str, Any] = {}
    context = contextvars.copy_context()

    def work() -> None:
        try:
            outcome["value"] = context.run(asyncio.run, coroutine)
        except BaseException as exc:  # handed to the waiting thread
            outcome["error"] = exc

    worker = threading.Thread(target=work, name="gosling-run-sync", daemon=True)
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    result: T = outcome["value"]
    return result
