"""Where log records go: always to `<state dir>/logs/gosling.log`; warnings also to stderr
in headless runs (the interactive session keeps the terminal for itself). Every record passes
the redactor as it is formatted, tracebacks included: a provider error body that echoes the
key never reaches the log file or stderr."""

from __future__ import annotations

import logging
import logging.handlers

LOG_FILE_BYTES = 1_000_000
LOG_FILE_COUNT = 3


class RedactingFormatter(logging.Formatter):
    """A formatter whose output (message, arguments, traceback) has secrets replaced."""

    def format(self, record: logging.LogRecord) -> str:
        from gosling.redact import redact

        return redact(super().format(record))


def setup_logging(*, warnings_to_stderr: bool) -> None:
    from gosling.prompts.locations import user_dirs

    root = logging.getLogger()
    root.setLevel(logging.INFO)
    for handler in list(root.handlers):
        if getattr(handler, "_gosling", False):
            root.removeHandler(handler)
    directory = user_dirs().state / "logs"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        to_file: logging.Handler = logging.handlers.RotatingFileHandler(
            directory / "gosling.log",
            maxBytes=LOG_FILE_BYTES,
            backupCount=LOG_FILE_COUNT,
            encoding="utf-8",
        )
    except OSError:
        to_file = logging.NullHandler()
    to_file.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handlers = [to_file]
    if warnings_to_stderr:
        to_stderr = logging.StreamHandler()
        to_stderr.setLevel(logging.WARNING)
        to_stderr.setFormatter(RedactingFormatter("warning: %(message)s"))
        handlers.append(to_stderr)
    for handler in handlers:
        handler._gosling = True  # type: ignore[attr-defined]
        root.addHandler(handler)
