"""A recording ACP client on the official Python SDK's client side, and `gosling acp` as the
subprocess it drives (the way an editor starts it)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from acp import spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    InitializeResponse,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)

from tests.fakes import FakeLLMServer

if TYPE_CHECKING:
    from acp import Client

REPO = Path(__file__).resolve().parents[2]
WAIT_SECS = 60.0


@dataclass
class Asked:
    """One permission request the agent made."""

    session_id: str
    tool_call: ToolCallUpdate
    options: list[PermissionOption]


@dataclass
class RecordingClient:
    """Records every update; answers permission requests from `answers` (option ids, or
    "cancel"); serves `buffers` (path -> unsaved text) through fs/* when offered."""

    answers: list[str] = field(default_factory=list)
    buffers: dict[str, str] = field(default_factory=dict)
    updates: list[tuple[str, Any]] = field(default_factory=list)
    asked: list[Asked] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    hold_permission: asyncio.Event | None = None
    """When set, permission requests wait for it (to cancel while one is open)."""

    def __post_init__(self) -> None:
        self._changed = asyncio.Condition()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        async with self._changed:
            self.updates.append((session_id, update))
            self._changed.notify_all()

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kw: Any
    ) -> RequestPermissionResponse:
        async with self._changed:
            self.asked.append(Asked(session_id, tool_call, options))
            self._changed.notify_all()
        if self.hold_permission is not None:
            await self.hold_permission.wait()
        answer = self.answers.pop(0) if self.answers else "cancel"
        if answer == "cancel":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def read_text_file(self, session_id: str, path: str, **kw: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        content = await asyncio.to_thread(Path(path).read_text, encoding="utf-8")
        return ReadTextFileResponse(content=content)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kw: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def wait_until(self, check: Callable[[], bool]) -> None:
        """Wait for observable state (an update or request arrived), never a fixed time."""
        async with asyncio.timeout(WAIT_SECS), self._changed:
            await self._changed.wait_for(check)

    def kinds(self, session_id: str | None = None) -> list[str]:
        return [u.session_update for s, u in self.updates if session_id is None or s == session_id]

    def of_kind(self, kind: str, session_id: str | None = None) -> list[Any]:
        return [
            u
            for s, u in self.updates
            if u.session_update == kind and (session_id is None or s == session_id)
        ]

    def agent_text(self, session_id: str | None = None) -> str:
        return "".join(u.content.text for u in self.of_kind("agent_message_chunk", session_id))

    def clear(self) -> None:
        self.updates.clear()
        self.asked.clear()


def agent_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment `gosling acp` gets: the test's home and keys, nothing of the user's."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "GOSLING_HOME": str(home),
        "GOSLING_TESTING": "1",
        "GOSLING_MAX_RETRIES": "0",
        "ANTHROPIC_API_KEY": "test-key",
        "PYTHONPATH": str(REPO / "src"),
    }
    env.update(extra)
    return env


def agent_args(server: FakeLLMServer, *extra: str) -> list[str]:
    return [
        "-m",
        "gosling",
        "acp",
        "--provider",
        "anthropic",
        "--model",
        "claude-sonnet-4-5",
        "--base-url",
        server.url,
        *extra,
    ]


@asynccontextmanager
async def running_agent(
    client: RecordingClient,
    args: Sequence[str],
    env: dict[str, str],
    *,
    fs: bool = False,
    command: str = sys.executable,
    stderr: Path | None = None,
) -> AsyncIterator[tuple[ClientSideConnection, InitializeResponse, asyncio.subprocess.Process]]:
    """`gosling acp` started as an editor starts it, initialized. Its stderr goes to a file
    (a pipe nobody reads would fill up and stall it)."""
    log_path = stderr or Path(env["GOSLING_HOME"]) / "acp-stderr.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        async with spawn_agent_process(
            cast("Client", client),
            command,
            *args,
            env=env,
            cwd=str(REPO),
            use_unstable_protocol=True,
            transport_kwargs={"stderr": log.fileno(), "shutdown_timeout": 30.0},
        ) as (conn, process):
            capabilities = ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs)
            )
            init = await asyncio.wait_for(
                conn.initialize(protocol_version=1, client_capabilities=capabilities), WAIT_SECS
            )
            yield conn, init, process


def text(value: str) -> list[Any]:
    return [text_block(value)]
