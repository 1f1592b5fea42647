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
from typing import TYPE_CHECKING

from gosling.agent.events import Event, PermissionRequest, ToolCall, ToolResult
from gosling.agent.hooks.outcome import NO_OUTCOME, HookOutcome, pre_tool_refusal
from gosling.agent.permissions import PermissionMode, PermissionSettings, Verdict, decide
from gosling.agent.tools.base import ExtensionData, ToolContext
from gosling.agent.tools.manager import ExtensionManager
from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse
from gosling.redact import redact

if TYPE_CHECKING:
    from gosling.agent.session import AgentSession

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
    session: AgentSession | None = None
    """The session whose hooks run around each call (PreToolUse, PostToolUse, Notification)."""
    responses: dict[str, ToolResponse] = field(default_factory=dict)
    denied: bool = False
    """True when a call was refused for lack of approval (headless `ask`)."""
    stop_reason: str | None = None
    """Set when a hook said `continue: false`: the turn ends after these calls."""

    async def run(self, requests: Sequence[ToolRequest]) -> AsyncIterator[Event]:
        """Decide, run and answer every request; the answers land in `responses`."""
        self.responses = {}
        allowed: list[ToolRequest] = []
        before = await self._pre_tool_use(requests)
        for asked in requests:
            outcome = before[asked.id]
            request = self._as_hook_updated(asked, outcome)
            yield ToolCall(request.id, request.name, dict(request.arguments))
            for event in outcome.events:
                yield event
            self.stop_reason = self.stop_reason or outcome.stop_reason
            refusal, events = await self._permission(request, outcome)
            for event in events:
                yield event
            if refusal is None:
                allowed.append(request)
            else:
                if outcome.context and request is not asked:  # say what was refused
                    refusal = f"{refusal}\n\n[hook] {outcome.context}"
                self.responses[request.id] = _error(request.id, refusal)
                yield ToolResult(request.id, request.name, refusal, True)

        ctx = ToolContext(
            working_dir=self.working_dir,
            extension_data=self.extension_data,
            session_messages=self.session_messages,
            session_id=self.session_id,
        )
        tasks = {
            asyncio.ensure_future(self._respond(request, ctx, before[request.id])): request
            for request in allowed
        }
        try:
            for finished in asyncio.as_completed(list(tasks)):
                response, after = await finished
                request = next(r for r in allowed if r.id == response.id)
                for event in after.events:
                    yield event
                self.stop_reason = self.stop_reason or after.stop_reason
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

    @property
    def _hooked(self) -> bool:
        return self.session is not None and self.session.hooks is not None

    async def _pre_tool_use(self, requests: Sequence[ToolRequest]) -> dict[str, HookOutcome]:
        """PreToolUse for every call at once (nothing is imported without hooks)."""
        if not self._hooked:
            return dict.fromkeys((r.id for r in requests), NO_OUTCOME)
        from gosling.agent.hooks import steps

        hooked = await steps.pre_tool_use(self.session, requests, self.working_dir)
        return {r.id: outcome for r, outcome in zip(requests, hooked, strict=True)}

    def _as_hook_updated(self, request: ToolRequest, outcome: HookOutcome) -> ToolRequest:
        """The call as it will run: a PreToolUse hook's `updatedInput` replaces the model's
        arguments (permissions then judge what really runs), and the model is told in the
        result. The stored assistant message keeps what the model asked for."""
        if outcome.updated_input is None:
            return request
        from gosling.agent.hooks.steps import input_update_note
        from gosling.agent.hooks.tools import arguments_from_hook

        arguments = arguments_from_hook(
            request.name, outcome.updated_input, request.arguments, self.working_dir
        )
        if arguments == dict(request.arguments):
            return request
        outcome.context = "\n\n".join(
            t for t in (input_update_note(request.name, arguments), outcome.context) if t
        )
        return request.model_copy(update={"arguments": arguments})

    async def _respond(
        self, request: ToolRequest, ctx: ToolContext, before: HookOutcome
    ) -> tuple[ToolResponse, HookOutcome]:
        """Run one call, then its PostToolUse hooks (which see the redacted result)."""
        response = redacted(await self.manager.respond(request, ctx))
        if not self._hooked:
            return response, before
        from gosling.agent.hooks import steps

        return await steps.post_tool_use(self.session, request, response, self.working_dir, before)

    async def _permission(
        self, request: ToolRequest, hooked: HookOutcome
    ) -> tuple[str | None, list[Event]]:
        """Refusal text (None: run it) and events. A PreToolUse hook's block or `deny` wins;
        its `allow` skips the mode's question but never a deny or ask rule; its `ask` asks."""
        if self.permissions.mode == PermissionMode.CHAT:
            return "Tools are disabled in chat mode.", []
        refusal = pre_tool_refusal(hooked)
        if refusal is not None:
            return refusal, []
        decision = decide(
            request.name,
            request.arguments,
            self.manager.annotations(request.name),
            self.permissions.mode,
            self.permissions.effective_rules(),
            self.working_dir,
        )
        verdict, reason = decision.verdict, decision.reason
        if verdict == Verdict.DENY:
            return f"Permission denied: {reason}", []
        by_rule = "rule '" in reason
        if hooked.permission == "allow" and not (verdict == Verdict.ASK and by_rule):
            return None, []
        if hooked.permission == "ask" and verdict == Verdict.ALLOW:
            verdict = Verdict.ASK
            reason = f"a PreToolUse hook asks: {hooked.permission_reason or 'no reason given'}"
        if verdict == Verdict.ALLOW:
            return None, []
        args = dict(request.arguments)
        if self.approver is None:
            self.denied = True
            events = await self._notify(
                f"{request.name} needs approval ({reason}) and nobody can give it; refused",
            )
            event = PermissionRequest(request.id, request.name, args, reason, False)
            return HEADLESS_DENIAL.format(reason=reason), [*events, event]
        events = await self._notify(f"gosling needs your permission to use {request.name}")
        granted = await self.approver(request, reason)
        event = PermissionRequest(request.id, request.name, args, reason, granted)
        if granted:
            return None, [*events, event]
        return "The user declined this tool call.", [*events, event]

    async def _notify(self, message: str) -> list[Event]:
        if not self._hooked:
            return []
        from gosling.agent.hooks import steps

        return await steps.notify(self.session, message, "permission_prompt")


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
