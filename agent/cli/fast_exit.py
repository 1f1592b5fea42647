"""Ending the `gosling` process at once when a command is done.

A normal interpreter exit with the SDKs and the tokenizer loaded spends about half a second
tearing down modules and objects nobody will use again. Once a command has flushed and closed
everything it wrote (the store committed and closed, spans exported, the answer written),
`finish` flushes the standard streams and the log handlers itself and ends the process with
`os._exit`, skipping that teardown (and `atexit` handlers, which is why every owner of state
must have closed it before).

Only the `gosling` entry point turns this on (`enable`): a command invoked in-process (a test
through click's `CliRunner`, a library caller) gets a plain `sys.exit` instead.
"""

from __future__ import annotations

import contextlib
import os
import sys

_enabled = False


def enable() -> None:
    """Called by the `gosling` entry point: `finish` may end the process itself."""
    global _enabled
    _enabled = True


def finish(code: int) -> None:
    """End the command with `code`: flush, then `os._exit` when enabled, else `sys.exit`."""
    if not _enabled:
        sys.exit(code)
    if "logging" in sys.modules:
        import logging

        logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing left to keep
            stream.flush()
    os._exit(code)
