"""`Outbox`: one session's updates, sent to the editor in order by a task of their own.

The reply loop hands each update over without waiting, so the only place a turn can be
interrupted is inside `Agent.reply` itself, which answers every open tool call when it is.
`flush` waits until everything handed over so far has been written; a prompt's response
and a permission request both wait for it, so they never overtake the updates before them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from acp import Client

from gosling.agent.acp.updates import SessionUpdate

logger = logging.getLogger(__name__)


class Outbox:
    def __init__(self, client: Client, session_id: str) -> None:
        self._client = client
        self._session_id = session_id
        self._queue: asyncio.Queue[SessionUpdate | None] = asyncio.Queue()
        self._task = asyncio.ensure_future(self._send_all())

    def post(self, update: SessionUpdate) -> None:
        self._queue.put_nowait(update)

    async def flush(self) -> None:
        if not self._task.done():
            await self._queue.join()

    async def close(self) -> None:
        """Send what is left, then stop."""
        if self._task.done():
            return
        self._queue.put_nowait(None)
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _send_all(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                if update is None:
                    return
                await self._client.session_update(session_id=self._session_id, update=update)
            except ConnectionError:
                logger.info("the editor went away; session updates are no longer sent")
            except Exception:
                logger.exception("could not send a session update")
            finally:
                self._queue.task_done()
