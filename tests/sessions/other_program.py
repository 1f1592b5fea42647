"""Another program holding a sessions database's write lock, as the store tests need it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def holding_write_lock(
    path: Path, begin: str = "BEGIN IMMEDIATE", *, first: Sequence[tuple[str, Any]] = ()
) -> Iterator[None]:
    """Another connection to `path` runs the `first` statements (committed), then holds an
    open `begin` transaction until the block ends, when it rolls back and closes."""
    other = sqlite3.connect(path, isolation_level=None)
    try:
        for statement, parameters in first:
            other.execute(statement, parameters)
        other.execute(begin)
        yield
        other.execute("ROLLBACK")
    finally:
        other.close()
