"""`EditorBuffers`: the developer tools' reads and writes of existing files through the
editor (`fs/read_text_file`, `fs/write_text_file`), so the model sees unsaved changes and
the editor sees its edits in the open buffer.

The file tools still do every check of their own first (inside the working dir, no symlink
swapped in, a regular text file); only the content comes from, or goes to, the editor. The
tools call in from their worker thread; an editor that fails or does not answer in time
makes the tool fall back to the file on disk.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from acp import Client

logger = logging.getLogger(__name__)

TIMEOUT_SECS = 20.0


class EditorBuffers:
    def __init__(
        self,
        client: Client,
        loop: asyncio.AbstractEventLoop,
        *,
        read: bool,
        write: bool,
        timeout: float = TIMEOUT_SECS,
    ) -> None:
        self._client = client
        self._loop = loop
        self._read = read
        self._write = write
        self._timeout = timeout
        self.session_id: str | None = None
        """Set once the session exists; until then nothing goes through the editor."""

    def read(self, path: Path) -> str | None:
        """The editor's text of `path` (its buffer when open), or None to use the disk."""
        if not self._read or not self._usable():
            return None
        assert self.session_id is not None
        call = self._client.read_text_file(session_id=self.session_id, path=str(path))
        try:
            return asyncio.run_coroutine_threadsafe(call, self._loop).result(self._timeout).content
        except Exception as exc:
            logger.info("the editor could not read %s (%s); reading the disk", path, exc)
            return None

    def write(self, path: Path, text: str) -> bool:
        """Write through the editor; False means it did not, and the disk is written."""
        if not self._write or not self._usable():
            return False
        assert self.session_id is not None
        call = self._client.write_text_file(
            session_id=self.session_id, path=str(path), content=text
        )
        try:
            asyncio.run_coroutine_threadsafe(call, self._loop).result(self._timeout)
        except Exception as exc:
            logger.info("the editor could not write %s (%s); writing the disk", path, exc)
            return False
        return True

    def _usable(self) -> bool:
        """Only from a worker thread: on the loop's own thread waiting would deadlock."""
        if self.session_id is None or self._loop.is_closed():
            return False
        return not _on_loop_thread(self._loop)


def _on_loop_thread(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
