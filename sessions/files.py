"""Writing session files (exports, batch trajectories): whole or not at all, owner-only."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_private(path: Path, text: str) -> None:
    """Write atomically (temp file, fsync, rename) with mode 0600: exports hold transcripts."""
    path = path.expanduser()
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
