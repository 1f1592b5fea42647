"""The server's lifetime: the protocol on stdio until the editor hangs up or a signal comes,
then every session closed cleanly (turns stopped with their tool calls answered, sessions
released, MCP servers and tool processes stopped)."""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import TYPE_CHECKING, cast

from gosling.agent.acp.server import GoslingAcpAgent, ServeOptions

if TYPE_CHECKING:
    from acp import Agent

logger = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


async def serve(options: ServeOptions) -> int:
    from acp import run_agent

    from gosling.agent.acp.transport import open_stdio, protect_stdout

    transport = await open_stdio(protect_stdout())
    agent = GoslingAcpAgent(options)
    loop = asyncio.get_running_loop()
    # The agent implements the methods gosling supports; the SDK answers the others (fork,
    # extensions) with "method not found". Unstable routes are on for session/resume and
    # session/close, which this SDK version still files under unstable.
    served = cast("Agent", agent)
    task = asyncio.ensure_future(run_agent(served, transport, use_unstable_protocol=True))
    received: list[int] = []

    def stop(sig: int) -> None:
        received.append(sig)
        task.cancel()

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop, sig)
    try:
        await task
    except asyncio.CancelledError:
        if not received:
            raise
        logger.info("stopping on signal %d", received[0])
    finally:
        await agent.shutdown()  # a second signal meanwhile changes nothing: the task is done
        await transport.close()
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)
    return 128 + received[0] if received else 0
