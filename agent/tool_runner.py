"""Run the tool calls of one assistant message: permissions first, then in parallel.

Every request gets exactly one response, whatever happens: a refusal, a failure, or — when
the turn is cancelled — a "cancelled" result, so the conversation stays valid. Every result
is redacted here, at the source, so a tool that prints the environment or a key file never
shows the secrets to the model, the session store or the output stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gosling.agent.events import Event, PermissionRequest, ToolCall, ToolResult
from gosling.agent.permissions import PermissionMode, PermissionSettings, Verdict, decide
from gosling.agent.tools.base import ExtensionData, ToolContext
from gosling.agent.tools.manager import ExtensionManager
from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse
from gosling.redact import redact

Approver = Callable[[ToolRequest, str], Awaitable[bool]]
"""Asks the user about one call; returns True to run it."""

CANCELLED_TEXT = "Cancelled: the user interrupted this turn before the tool finished."
HEADLESS_DENIAL = (
    "Permission denied: this call needs approval ({reason}), and gosling is running without "
    "anyone to ask. Continue without it, or tell the user to rerun with `--mode auto` or add "
    "an allow rule for it to the config."
)
PREVIEW_CHARS = 2_000


@dataclass
class ToolRunner:
    manager: ExtensionManager
    permissions: PermissionSettings
    working_dir: Path
    extension_data: ExtensionData
    approver: Approver | None = None
    session_messages: Callable[[], Sequence[Message]] | None = None
    session_id: str | None = None
    responses: dict[str, ToolResponse] = field(default_factory=dict)
    denied: bool = False
    """True when a call was refused for lack of approval (headless `ask`)."""

    async def run(self, requests: Sequence[ToolRequest]) -> AsyncIterator[Event]:
        """Decide, run and answer every request; the answers land in `responses`."""
        self.responses = {}
        allowed: list[ToolRequest] = []
        for request in requests:
            yield ToolCall(request.id, request.name, dict(request.arguments))
            refusal, events = await self._permission(request)
            for event in events:
                yield event
            if refusal is None:
                allowed.append(request)
            else:
                self.responses[request.id] = _error(request.id, refusal)
                yield ToolResult(request.id, request.name, refusal, True)

        ctx = ToolContext(
            working_dir=self.working_dir,
            extension_data=self.extension_data,
            session_messages=self.session_messages,
            session_id=self.session_id,
        )
        tasks = {
            asyncio.ensure_future(self.manager.respond(request, ctx)): request
            for request in allowed
        }
        try:
            for finished in asyncio.as_completed(list(tasks)):
                response = redacted(await finished)
                request = next(r for r in allowed if r.id == response.id)
                self.responses[response.id] = response
                yield ToolResult(request.id, request.name, _preview(response), response.is_error)
        finally:
            pending = [t for t in tasks if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)

    def response_message(self, requests: Sequence[ToolRequest]) -> Message:
        """One user message answering every request in order (cancelled where missing)."""
        parts = [self.responses.get(r.id) or _error(r.id, CANCELLED_TEXT) for r in requests]
        return Message(role="user", content=tuple(parts))

    async def _permission(self, request: ToolRequest) -> tuple[str | None, list[Event]]:
        if self.permissions.mode == PermissionMode.CHAT:
            return "Tools are disabled in chat mode.", []
        decision = decide(
            request.name,
            request.arguments,
            self.manager.annotations(request.name),
            self.permissions.mode,
            self.permissions.effective_rules(),
            self.working_dir,
        )
        if decision.verdict == Verdict.ALLOW:
            return None, []
        if decision.verdict == Verdict.DENY:
            return f"Permission denied: {decision.reason}", []
        args = dict(request.arguments)
        if self.approver is None:
            self.denied = True
            event = PermissionRequest(request.id, request.name, args, decision.reason, False)
            return HEADLESS_DENIAL.format(reason=decision.reason), [event]
        granted = await self.approver(request, decision.reason)
        event = PermissionRequest(request.id, request.name, args, decision.reason, granted)
        if granted:
            return None, [event]
        return "The user declined this tool call.", [event]


def redacted(response: ToolResponse) -> ToolResponse:
    """`response` with secrets in its text parts replaced (see `redact`)."""
    parts = tuple(
        TextContent(text=redact(p.text)) if isinstance(p, TextContent) else p
        for p in response.content
    )
    if all(a is b or a == b for a, b in zip(parts, response.content, strict=True)):
        return response
    return response.model_copy(update={"content": parts})


def _error(request_id: str, text: str) -> ToolResponse:
    return ToolResponse(id=request_id, content=(TextContent(text=text),), is_error=True)


def _preview(response: ToolResponse) -> str:
    text = response.text()
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "…"
