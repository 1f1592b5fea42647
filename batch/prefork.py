"""Imported by the local pool's forkserver, and only there: its import is the warm-up.

A forkserver can only be told to import modules before it forks workers, so this module's
import does the work every worker would otherwise repeat on its first task: the imports,
logging, the tokenizer, the TLS context, the SDKs' first stream (`warm_up`), and the session
store's schema (opened and closed before any fork). Then every object made so far is frozen
out of the garbage collector (`gc.freeze`): the workers forked from here share those pages
copy-on-write and never walk them, which a collection would do at some point of each
worker's first task (tens of milliseconds each, eight workers at once on two cores). The
collector is off meanwhile: the imports alone make a few hundred thousand objects, and
collecting them while they are all still alive is wasted time.

Never import this module anywhere else.
"""

from __future__ import annotations

import gc
import os
import signal


def _quiet() -> None:
    """Let go of the driver's stdout and stderr: whoever reads them (a terminal, a pipe a
    caller waits on) must not wait for this process too. Workers write to the batch's log."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)


def _warm_up() -> None:
    from gosling.batch.forkserver import preloaded_providers
    from gosling.batch.local_pool import prepare_session_store
    from gosling.batch.worker import sdk_modules, warm_up

    warm_up(sdk_modules(preloaded_providers()))
    prepare_session_store()


_quiet()
# A Ctrl-C reaches the whole process group; the forkserver ignores it once it serves, and
# must not die of it while it warms up.
signal.signal(signal.SIGINT, signal.SIG_IGN)
gc.disable()
try:
    _warm_up()
except Exception:
    # Best effort: each worker calls `warm_up` again and reports what fails, task by task.
    pass
finally:
    gc.freeze()
    gc.enable()
    signal.signal(signal.SIGINT, signal.default_int_handler)
