"""`ExtensionManager`: the extensions of one session, their tools, and dispatch of tool calls.

The model sees every tool as `<extension>__<tool>`. The manager maps those names back, turns
an unknown name into an error result that lists what exists, and reports extensions that
start, fail or stop as `ExtensionEvent`s for the user. It never raises from a tool call.
Every result passes its `result_limit` (the size cap), so no tool can flood the session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from gosling.agent.sandbox import SandboxPolicy
from gosling.agent.tools.base import Tool, ToolAnnotations, ToolContext, ToolResult, exposed_name
from gosling.agent.tools.extension_config import ExtensionConfig
from gosling.conversation import ToolRequest, ToolResponse
from gosling.providers.base import ToolSpec


class Extension(Protocol):
    """A named group of tools with a lifetime (built in, or an MCP server)."""

    @property
    def name(self) -> str: ...

    @property
    def instructions(self) -> str | None:
        """Text for the system prompt about how to use these tools, if any."""
        ...

    def tools(self) -> Sequence[Tool]: ...

    async def close(self) -> None: ...


class BuiltinExtension:
    """An extension whose tools run in this process."""

    def __init__(self, name: str, tools: Iterable[Tool], instructions: str | None = None):
        self._name = name
        self._tools = tuple(tools)
        self._instructions = instructions

    @property
    def name(self) -> str:
        return self._name

    @property
    def instructions(self) -> str | None:
        return self._instructions

    def tools(self) -> Sequence[Tool]:
        return self._tools

    async def close(self) -> None:
        return None


@dataclass(frozen=True)
class ExtensionEvent:
    """Something the user should hear about an extension."""

    extension: str
    kind: Literal["started", "failed", "stopped"]
    message: str


EventHandler = Callable[[ExtensionEvent], None]


class ResultLimit(Protocol):
    """The size cap every tool result passes before the agent sees it
    (`agent.tools.developer.ResultCaps`)."""

    def over(self, result: ToolResult) -> bool:
        """Cheap check, on the event loop: would `apply` change `result`?"""
        ...

    def apply(self, result: ToolResult, label: str, session_id: str | None = None) -> ToolResult:
        """`result` within the caps (blocking: it may write a spill file, which belongs to
        session `session_id`)."""
        ...


class ExtensionManager:
    """Holds the session's extensions; lists their tools and routes calls to them."""

    def __init__(
        self,
        extensions: Iterable[Extension] = (),
        *,
        on_event: EventHandler | None = None,
        log_dir: Path | None = None,
        result_limit: ResultLimit | None = None,
    ) -> None:
        self._extensions: dict[str, Extension] = {}
        self._result_limit = result_limit
        self._gone: dict[str, str] = {}
        """Names of extensions that stopped mid-session -> why, to explain missing tools."""
        self._retired: list[Extension] = []
        """Stopped extensions still winding down; `close()` waits for them."""
        self._on_event = on_event
        self._log_dir = log_dir
        self.events: list[ExtensionEvent] = []
        """Every event so far, oldest first."""
        for extension in extensions:
            self.add(extension)

    # -- membership ---------------------------------------------------------------------------

    def add(self, extension: Extension) -> None:
        if extension.name in self._extensions:
            raise ValueError(f"an extension named {extension.name!r} is already loaded")
        self._extensions[extension.name] = extension

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._extensions)

    def get(self, name: str) -> Extension | None:
        return self._extensions.get(name)

    async def start_mcp(
        self,
        configs: Iterable[ExtensionConfig],
        working_dir: Path,
        *,
        sandbox: SandboxPolicy | None = None,
    ) -> None:
        """Start MCP servers concurrently (stdio ones inside `sandbox` when given). Failures
        become `failed` events, not exceptions."""
        wanted = [c for c in configs if c.enabled]
        await asyncio.gather(*(self._start_one(c, working_dir, sandbox) for c in wanted))

    async def _start_one(
        self, config: ExtensionConfig, working_dir: Path, sandbox: SandboxPolicy | None
    ) -> None:
        from gosling.agent.tools.mcp_extension import McpExtension, McpStartError

        if config.name in self._extensions:
            self._emit(config.name, "failed", f"extension {config.name!r} is already loaded")
            return
        extension = McpExtension(
            config,
            working_dir=working_dir,
            log_dir=self._log_dir,
            on_stopped=self._stopped,
            sandbox=sandbox,
        )
        try:
            await extension.start()
        except McpStartError as exc:
            self._emit(config.name, "failed", str(exc))
            return
        self._extensions[config.name] = extension
        count = len(extension.tools())
        self._emit(config.name, "started", f"extension {config.name!r} started ({count} tools)")

    def _stopped(self, extension: Extension, reason: str) -> None:
        if self._extensions.get(extension.name) is extension:
            del self._extensions[extension.name]
            self._gone[extension.name] = reason
            self._retired.append(extension)
            self._emit(
                extension.name,
                "stopped",
                f"extension {extension.name!r} stopped ({reason}); its tools were removed",
            )

    def _emit(
        self, extension: str, kind: Literal["started", "failed", "stopped"], text: str
    ) -> None:
        event = ExtensionEvent(extension, kind, text)
        self.events.append(event)
        if self._on_event is not None:
            self._on_event(event)

    async def remove(self, name: str) -> None:
        extension = self._extensions.pop(name, None)
        if extension is not None:
            await extension.close()

    async def close(self) -> None:
        """Close every extension (stops MCP server processes); safe to call twice."""
        extensions = [*self._extensions.values(), *self._retired]
        self._extensions.clear()
        self._retired.clear()
        results = await asyncio.gather(*(e.close() for e in extensions), return_exceptions=True)
        for extension, result in zip(extensions, results, strict=True):
            if isinstance(result, Exception):
                self._emit(extension.name, "failed", f"closing {extension.name!r} failed: {result}")

    async def __aenter__(self) -> ExtensionManager:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- tools --------------------------------------------------------------------------------

    def tools(self) -> dict[str, Tool]:
        """Exposed name -> tool, over every live extension. The first of two clashing names wins."""
        table: dict[str, Tool] = {}
        for extension in list(self._extensions.values()):
            for item in extension.tools():
                table.setdefault(exposed_name(extension.name, item.name), item)
        return table

    def specs(self) -> list[ToolSpec]:
        return [item.to_spec(name) for name, item in self.tools().items()]

    def annotations(self, exposed: str) -> ToolAnnotations | None:
        item = self.tools().get(exposed)
        return None if item is None else item.annotations

    def instructions(self) -> dict[str, str]:
        """Extension name -> its instructions, for extensions that have any."""
        return {n: e.instructions for n, e in self._extensions.items() if e.instructions}

    async def call(self, exposed: str, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the named tool. Unknown names and failures come back as error results."""
        table = self.tools()
        item = table.get(exposed)
        if item is None:
            available = ", ".join(sorted(table)) or "none"
            owner = exposed.split("__", 1)[0]
            if owner in self._gone:
                return ToolResult.error(
                    f"Tool {exposed!r} is no longer available: extension {owner!r} stopped "
                    f"({self._gone[owner]}). Available tools: {available}"
                )
            return ToolResult.error(f"Unknown tool {exposed!r}. Available tools: {available}")
        result = await item.call(arguments, ctx)
        limit = self._result_limit
        if limit is None or item.caps_own_output or not limit.over(result):
            return result
        return await asyncio.to_thread(limit.apply, result, exposed, ctx.session_id)

    async def respond(self, request: ToolRequest, ctx: ToolContext) -> ToolResponse:
        """Answer a model's tool request (a malformed request is answered with its error)."""
        if request.error is not None:
            result = ToolResult.error(f"The tool call could not be read: {request.error}")
        else:
            result = await self.call(request.name, dict(request.arguments), ctx)
        return to_response(request.id, result)


def to_response(request_id: str, result: ToolResult) -> ToolResponse:
    return ToolResponse(id=request_id, content=result.content, is_error=result.is_error)
