"""MCP servers as extensions, through the official `mcp` SDK (imported lazily, on start).

Each server is owned by one asyncio task that enters the SDK's transport and client context
managers and leaves them again, because anyio task groups must be exited by the task that
entered them. Other tasks call tools through the connected client. The owner task also
watches the server's output stream: when the server exits mid-session, the extension reports
itself stopped (its tools disappear) without waiting for the next call to fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import shutil
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from gosling.agent.sandbox import Launch, SandboxPolicy, mcp_policy, plan_launch, tool_environment
from gosling.agent.sandbox.choice import server_cache, server_cache_environment
from gosling.agent.tools.base import Tool, ToolAnnotations, ToolContext, ToolResult
from gosling.agent.tools.extension_config import ExtensionConfig
from gosling.conversation import ImageContent, TextContent

if TYPE_CHECKING:
    import anyio
    import mcp
    import mcp.types as mcp_types
    from mcp.client._transport import Transport, TransportStreams


class McpStartError(Exception):
    """The server did not start or did not list its tools; the message is for the user."""


def mcp_log_dir() -> Path:
    """Where server stderr goes: `<state dir>/logs`."""
    from gosling.prompts.locations import user_dirs

    return user_dirs().state / "logs"


class McpTool(Tool):
    """One tool of an MCP server, called through its extension."""

    def __init__(self, extension: McpExtension, listed: mcp_types.Tool) -> None:
        self.extension = extension
        self.name = listed.name
        self.description = listed.description or listed.title or listed.name
        self.input_schema = dict(listed.input_schema or {"type": "object"})
        self.input_schema.setdefault("type", "object")
        self.annotations = _annotations(listed.annotations)

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await self.extension.call_tool(self.name, arguments)


def _annotations(hints: mcp_types.ToolAnnotations | None) -> ToolAnnotations:
    """MCP's hints with MCP's defaults: unless it says otherwise, a tool that is not read-only
    may be destructive, and every tool is open-world."""
    if hints is None:
        return ToolAnnotations(read_only=False, destructive=True, open_world=True)
    read_only = bool(hints.read_only_hint)
    destructive = hints.destructive_hint
    open_world = hints.open_world_hint
    return ToolAnnotations(
        read_only=read_only,
        destructive=not read_only if destructive is None else bool(destructive),
        open_world=True if open_world is None else bool(open_world),
    )


class McpExtension:
    """A connected MCP server. `start()` raises `McpStartError`; tool calls never raise."""

    def __init__(
        self,
        config: ExtensionConfig,
        *,
        working_dir: Path,
        log_dir: Path | None = None,
        on_stopped: Callable[[McpExtension, str], None] | None = None,
        sandbox: SandboxPolicy | None = None,
    ) -> None:
        self.config = config
        self.working_dir = working_dir
        self.sandbox = sandbox
        """The session's sandbox; stdio servers run in it with their own network switch."""
        self._launch: Launch | None = None
        self.log_dir = log_dir
        self._on_stopped = on_stopped
        self._client: mcp.Client | None = None
        self._tools: tuple[McpTool, ...] = ()
        self._instructions: str | None = None
        self._owner: asyncio.Task[None] | None = None
        self._scope: anyio.CancelScope | None = None
        self._stop = asyncio.Event()
        self.stopped_reason: str | None = None
        self._log_offset = 0
        """Where this start's output begins in the (appended) log file."""

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def instructions(self) -> str | None:
        return self._instructions

    @property
    def alive(self) -> bool:
        return self._client is not None and self.stopped_reason is None

    def tools(self) -> Sequence[Tool]:
        return self._tools if self.alive else ()

    @property
    def log_path(self) -> Path:
        return (self.log_dir or mcp_log_dir()) / f"mcp-{self.name}.log"

    # -- lifetime -----------------------------------------------------------------------------

    async def start(self) -> None:
        if self._owner is not None:
            raise RuntimeError(f"extension {self.name!r} was already started")
        # The SDK takes most of a second to import; do it off the event loop, before the
        # startup clock starts, so a first server does not freeze the UI or time out.
        await asyncio.to_thread(_import_sdk)
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._owner = asyncio.create_task(self._serve(ready), name=f"mcp-{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.config.startup_timeout_secs)
        except TimeoutError:
            await self._cancel_owner()
            raise McpStartError(
                f"extension {self.name!r} did not start within "
                f"{self.config.startup_timeout_secs:g}s ({self.config.describe()}); "
                f"see {self.log_path}"
            ) from None
        except McpStartError:
            await self._cancel_owner()
            raise
        except asyncio.CancelledError:
            await self._cancel_owner()
            raise

    async def close(self) -> None:
        """Disconnect and stop the server process (and its children); idempotent."""
        self._stop.set()
        owner = self._owner
        if owner is not None and not owner.done():
            with contextlib.suppress(asyncio.CancelledError):
                await owner

    async def _cancel_owner(self) -> None:
        # Cancel through the anyio scope, not Task.cancel(): the SDK shields its process
        # shutdown from anyio cancellation, and a native cancel could cut it short.
        owner = self._owner
        if owner is None or owner.done():
            return
        if self._scope is not None:
            self._scope.cancel()
        else:
            owner.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.shield(owner)

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        import anyio

        closed = asyncio.Event()
        with contextlib.suppress(OSError):
            self._log_offset = self.log_path.stat().st_size
        try:
            with anyio.CancelScope() as self._scope:
                async with contextlib.AsyncExitStack() as stack:
                    client = await self._connect(stack, closed)
                    self._tools = await self._list_tools(client)
                    self._instructions = client.instructions
                    self._client = client
                    ready.set_result(None)
                    await _first_of(self._stop.wait(), closed.wait())
                    if not self._stop.is_set():
                        self._mark_stopped("the server exited")
        except Exception as exc:
            if not ready.done():
                said = last_words(self.log_path, self._log_offset)
                ready.set_exception(
                    McpStartError(
                        f"extension {self.name!r} failed to start ({self.config.describe()}): "
                        f"{describe_error(exc)}{f'; it said: {said}' if said else ''}; "
                        f"see {self.log_path}"
                    )
                )
            else:
                self._mark_stopped(describe_error(exc))
        finally:
            self._client = None
            if self._launch is not None:
                self._launch.kill_leftovers()

    async def _connect(self, stack: contextlib.AsyncExitStack, closed: asyncio.Event) -> mcp.Client:
        import mcp

        transport = _watch_for_eof(await self._transport(stack), closed)
        client = mcp.Client(transport, cache=None)
        return await stack.enter_async_context(client)

    async def _transport(self, stack: contextlib.AsyncExitStack) -> Transport:
        config = self.config
        if config.type == "streamable_http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = create_mcp_http_client(headers=dict(config.headers))
            await stack.enter_async_context(http)
            return streamable_http_client(str(config.url), http_client=http)
        from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

        sandbox = self.sandbox and mcp_policy(
            self.sandbox,
            network=config.network,
            name=config.name,
            argv=[str(config.command), *config.args],
        )
        cwd = Path(config.cwd or self.working_dir)
        cache = sandbox and server_cache(sandbox, config.name)
        cached = server_cache_environment(cache) if cache else {}
        env = tool_environment({**get_default_environment(), **cached}, keep=config.env)
        # Under bubblewrap a missing program only shows as a server that hung up at once.
        require_program(str(config.command), cwd=cwd, path=env.get("PATH"))
        self._launch = launch = plan_launch(
            [str(config.command), *config.args], cwd=cwd, env=env, sandbox=sandbox
        )
        params = StdioServerParameters(
            command=launch.argv[0], args=list(launch.argv[1:]), env=launch.env, cwd=launch.cwd
        )
        return stdio_client(params, errlog=stack.enter_context(self._open_log()))

    def _open_log(self) -> TextIO:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        return self.log_path.open("a", encoding="utf-8")

    async def _list_tools(self, client: mcp.Client) -> tuple[McpTool, ...]:
        listed: list[mcp_types.Tool] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            listed.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        allowed = set(self.config.available_tools)
        return tuple(McpTool(self, t) for t in listed if not allowed or t.name in allowed)

    def _mark_stopped(self, reason: str) -> None:
        if self.stopped_reason is not None or self._stop.is_set():
            return
        self.stopped_reason = reason
        if self._on_stopped is not None:
            self._on_stopped(self, reason)

    # -- calls --------------------------------------------------------------------------------

    async def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> ToolResult:
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        client = self._client
        if client is None or not self.alive:
            reason = self.stopped_reason or "not connected"
            return ToolResult.error(f"Extension {self.name!r} is not available ({reason}).")
        timeout = self.config.timeout_secs
        try:
            async with asyncio.timeout(timeout + 1):
                result = await client.call_tool(tool_name, arguments, read_timeout_seconds=timeout)
        except TimeoutError:
            return _timed_out(self.name, tool_name, timeout)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                return _timed_out(self.name, tool_name, timeout)
            if exc.code == CONNECTION_CLOSED:
                self._mark_stopped("the connection closed")
                self._stop_owner_soon()
                return ToolResult.error(
                    f"Extension {self.name!r} stopped during the call; its tools were removed."
                )
            return ToolResult.error(f"{self.name}__{tool_name} failed: {exc.message}")
        return ToolResult(
            _convert_content(result.content, result.structured_content), result.is_error
        )

    def _stop_owner_soon(self) -> None:
        self._stop.set()


def _timed_out(extension: str, tool_name: str, timeout: float) -> ToolResult:
    return ToolResult.error(
        f"{extension}__{tool_name} did not answer within {timeout:g}s and was abandoned."
    )


def _import_sdk() -> None:
    import mcp.client.stdio
    import mcp.client.streamable_http  # noqa: F401


def _convert_content(
    blocks: Sequence[Any], structured: dict[str, Any] | None
) -> tuple[TextContent | ImageContent, ...]:
    """MCP content blocks as conversation parts; kinds we cannot carry become short text."""
    import json

    parts: list[TextContent | ImageContent] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(TextContent(text=block.text))
        elif kind == "image":
            parts.append(ImageContent(data=block.data, mime_type=block.mime_type))
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(
                TextContent(text=text if text is not None else f"[resource {resource.uri}]")
            )
        elif kind == "resource_link":
            parts.append(TextContent(text=f"[resource link {block.uri}]"))
        else:
            parts.append(TextContent(text=f"[{kind} content omitted]"))
    if not parts and structured is not None:
        parts.append(TextContent(text=json.dumps(structured, indent=2)))
    return tuple(parts)


@contextlib.asynccontextmanager
async def _watch_for_eof(
    transport: Transport, closed: asyncio.Event
) -> AsyncIterator[TransportStreams]:
    """Pass the transport's streams through, setting `closed` when the server's side ends."""
    import anyio
    from mcp.shared.message import SessionMessage

    async with transport as (read, write):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def relay() -> None:
            try:
                async with send:
                    async for item in read:
                        await send.send(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass
            finally:
                closed.set()

        async with anyio.create_task_group() as group:
            group.start_soon(relay)
            try:
                yield receive, write
            finally:
                group.cancel_scope.cancel()


async def _first_of(*waits: Any) -> None:
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


def _connection_closed_code() -> int | None:
    try:
        from mcp_types import CONNECTION_CLOSED
    except ImportError:  # pragma: no cover - mcp is a dependency
        return None
    return CONNECTION_CLOSED


def describe_error(exc: BaseException) -> str:
    """The innermost useful message of an exception (task groups wrap errors in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if getattr(exc, "code", None) == _connection_closed_code():
        return "the server closed the connection (did it exit?)"
    text = str(exc) or type(exc).__name__
    if isinstance(exc, FileNotFoundError | PermissionError) and exc.filename:
        return f"cannot run {exc.filename!r}: {exc.strerror}"
    return text


def require_program(command: str, *, cwd: Path, path: str | None) -> None:
    """Raise FileNotFoundError, named, when `command` is not a program that can run."""
    if "/" in command:
        found = (cwd / command).is_file()
    else:
        found = shutil.which(command, path=path) is not None
    if not found:
        raise FileNotFoundError(errno.ENOENT, "no such program on PATH or at that path", command)


def last_words(log_path: Path, offset: int, limit: int = 300) -> str:
    """The last line a server wrote to its log since `offset` (a traceback's last line names
    the error), cut to `limit` characters, control characters and secrets replaced; empty
    when it wrote nothing."""
    try:
        with log_path.open("rb") as log:
            log.seek(offset)
            tail = log.read()[-8192:]
    except OSError:
        return ""
    lines = [line.strip() for line in tail.decode("utf-8", "replace").splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        return ""
    from gosling.redact import redact

    # The server's own text, shown on the user's terminal: no escape sequences, no secrets.
    printable = "".join(ch if ch.isprintable() else "?" for ch in lines[-1][:limit])
    return redact(printable)
