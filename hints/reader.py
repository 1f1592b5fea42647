"""Reading hint files under one shared output budget, each file at most once."""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

from gosling.hints.imports import ImportExpander, ImportScope, NotTextError, read_text
from gosling.hints.report import LoadedHint, Refusal, RefusalReason, Scope

logger = logging.getLogger(__name__)

MAX_HINT_OUTPUT_BYTES = 1024 * 1024
"""All hints of a session share this many bytes of output."""


class HintFileReader:
    """Loads hint files whole or not at all, and remembers what it loaded and refused.

    A file is identified by its real path, so a symlinked alias (`CLAUDE.md -> AGENTS.md`) is
    read once. A file that would not fit in the remaining budget is skipped whole, never cut.
    """

    def __init__(
        self, budget_bytes: int = MAX_HINT_OUTPUT_BYTES, import_budget_bytes: int | None = None
    ) -> None:
        if budget_bytes < 0:
            raise ValueError(f"hint budget must be zero or more bytes, got {budget_bytes}")
        if import_budget_bytes is not None and import_budget_bytes < 0:
            raise ValueError(
                f"hint import budget must be zero or more bytes, got {import_budget_bytes}"
            )
        self.budget_bytes = budget_bytes
        self.remaining = budget_bytes
        self.import_budget_bytes = import_budget_bytes
        """What `@file` imports may add over all hint files together (None: only the
        per-file limit, `imports.MAX_EXPANDED_OUTPUT_BYTES`)."""
        self.imports_remaining = (
            budget_bytes if import_budget_bytes is None else import_budget_bytes
        )
        self.loaded: list[LoadedHint] = []
        self.refused: list[Refusal] = []
        self._seen: set[Path] = set()

    def has_seen(self, path: Path) -> bool:
        return Path(os.path.realpath(path)) in self._seen

    def mark_seen(self, path: Path) -> None:
        """Treat `path` as already loaded (restoring a session), charging its size."""
        real = Path(os.path.realpath(path))
        if real not in self._seen:
            self._seen.add(real)
            with contextlib.suppress(OSError):
                self.remaining = max(0, self.remaining - real.stat().st_size - 1)

    def read(
        self, path: Path, scope: ImportScope, kind: Scope, framing: int, *, confine: bool
    ) -> str | None:
        """The expanded content of the hint file at `path`, or None when it is absent, empty,
        already read or refused. `framing` is the extra output bytes accepting it costs;
        `confine` refuses a file whose real path lies outside the import boundary."""
        if not path.is_file():
            return None
        real = Path(os.path.realpath(path))
        if real in self._seen:
            return None
        self._seen.add(real)
        boundary = Path(os.path.realpath(scope.boundary))
        if confine and not real.is_relative_to(boundary):
            return self._refuse(RefusalReason.OUTSIDE_BOUNDARY, path, kind)
        try:
            size = real.stat().st_size
            if size + framing > self.remaining:
                return self._refuse(RefusalReason.HINT_BUDGET, path, kind)
            text = read_text(real)
        except NotTextError:
            return self._refuse(RefusalReason.NOT_TEXT, path, kind)
        except OSError:
            return self._refuse(RefusalReason.UNREADABLE, path, kind)
        if not text.strip():
            return None
        expander = ImportExpander(scope, self.imports_remaining)
        expanded = expander.expand(text, path)
        output_bytes = len(expanded.encode())
        if output_bytes + framing > self.remaining:
            return self._refuse(RefusalReason.HINT_BUDGET, path, kind)
        self.remaining -= output_bytes + framing
        self.imports_remaining = max(0, self.imports_remaining - expander.budget_used)
        self.loaded.append(LoadedHint(path, kind, size, output_bytes, tuple(expander.imports)))
        self.refused.extend(expander.refusals)
        return expanded

    def _refuse(self, reason: RefusalReason, path: Path, kind: Scope) -> str | None:
        """Record and log a refusal; returns None so callers can `return` it."""
        logger.warning("hint file %s skipped: %s", path, reason)
        self.refused.append(Refusal(reason, path, scope=kind))
        return None
