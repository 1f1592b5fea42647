"""`ScriptedProvider`: a provider that replays a queue of scripted replies.

Use it before writing a new mock. Each step is one model call:

- a `str`: a text reply;
- a `Message`: that reply as is;
- a `ScriptedReply`: a reply with tool calls, thinking, chosen chunks, usage or stop reason;
- a `ProviderError` (or any exception): raised by the call;
- a callable taking the `ScriptedRequest` and returning any of the above, for replies that
  depend on what was sent.

Every call is recorded in `requests`; `assert_complete()` fails if steps are left over.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gosling.conversation import Content, Message, TextContent, ThinkingContent, ToolRequest
from gosling.providers.base import (
    Completed,
    ModelConfig,
    Provider,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolArgumentsDelta,
    ToolRequestDone,
    ToolRequestStarted,
    ToolSpec,
    Usage,
    UsageReported,
)


class UnexpectedModelCall(AssertionError):
    """The scripted provider was called more often than it had steps for."""


class UnconsumedSteps(AssertionError):
    """`assert_complete()` found scripted steps that were never used."""


@dataclass(frozen=True)
class ScriptedToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:12]}")


@dataclass(frozen=True)
class ScriptedReply:
    """One scripted reply. `chunks` overrides how `text` is split when streamed."""

    text: str = ""
    tool_calls: Sequence[ScriptedToolCall] = ()
    thinking: str = ""
    chunks: Sequence[str] | None = None
    usage: Usage | None = None
    stop_reason: str | None = None

    @classmethod
    def tool_call(
        cls, name: str, arguments: dict[str, Any] | None = None, **kw: Any
    ) -> ScriptedReply:
        return cls(tool_calls=[ScriptedToolCall(name, arguments or {}, **kw)])


@dataclass(frozen=True)
class ScriptedRequest:
    """What one call was sent."""

    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    fast: bool
    streamed: bool


Step = str | Message | ScriptedReply | BaseException | Callable[[ScriptedRequest], Any]


class ScriptedProvider(Provider):
    """A provider for tests: replays `steps` in order and records every request."""

    name = "scripted"

    def __init__(
        self,
        steps: Iterable[Step] = (),
        *,
        model_config: ModelConfig | None = None,
        manages_own_context: bool = False,
    ) -> None:
        super().__init__(model_config or ModelConfig(model="scripted-model"))
        self.steps: list[Step] = list(steps)
        self.requests: list[ScriptedRequest] = []
        self._manages_own_context = manages_own_context

    @property
    def manages_own_context(self) -> bool:
        return self._manages_own_context

    def add(self, *steps: Step) -> None:
        self.steps.extend(steps)

    def assert_complete(self) -> None:
        if self.steps:
            raise UnconsumedSteps(f"{len(self.steps)} scripted step(s) were never used")

    def _next(self, request: ScriptedRequest) -> ScriptedReply | Message:
        self.requests.append(request)
        if not self.steps:
            raise UnexpectedModelCall(
                f"model called {len(self.requests)} times but only "
                f"{len(self.requests) - 1} step(s) were scripted"
            )
        step: Any = self.steps.pop(0)
        if callable(step) and not isinstance(step, BaseException | type):
            step = step(request)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, str):
            return ScriptedReply(text=step)
        if isinstance(step, ScriptedReply | Message):
            return step
        raise TypeError(f"unsupported scripted step: {step!r}")

    async def stream(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> AsyncIterator[StreamEvent]:
        request = ScriptedRequest(system, tuple(messages), tuple(tools), fast, streamed=True)
        reply = self._next(request)
        for event in _events(reply):
            yield event

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> tuple[Message, Usage]:
        request = ScriptedRequest(system, tuple(messages), tuple(tools), fast, streamed=False)
        reply = self._next(request)
        final = _events(reply)[-1]
        assert isinstance(final, Completed)
        return final.message, final.usage


def _events(reply: ScriptedReply | Message) -> list[StreamEvent]:
    if isinstance(reply, Message):
        usage = Usage(stop_reason="tool_use" if reply.tool_requests else "end_turn")
        events: list[StreamEvent] = [TextDelta(reply.text)] if reply.text else []
        events.append(Completed(reply, usage))
        return events

    events = []
    content: list[Content] = []
    if reply.thinking:
        events.append(ThinkingDelta(reply.thinking))
        content.append(ThinkingContent(thinking=reply.thinking, signature="scripted"))
    if reply.text:
        chunks = list(reply.chunks) if reply.chunks is not None else _split(reply.text)
        events.extend(TextDelta(c) for c in chunks)
        content.append(TextContent(text=reply.text))
    for call in reply.tool_calls:
        raw = json.dumps(call.arguments)
        events.append(ToolRequestStarted(call.id, call.name))
        events.append(ToolArgumentsDelta(call.id, raw))
        events.append(ToolRequestDone(call.id, call.name, dict(call.arguments)))
        content.append(ToolRequest(id=call.id, name=call.name, arguments=dict(call.arguments)))
    stop = reply.stop_reason or ("tool_use" if reply.tool_calls else "end_turn")
    usage = (reply.usage or Usage()).model_copy(update={"stop_reason": stop})
    events.append(UsageReported(usage))
    events.append(Completed(Message(role="assistant", content=tuple(content)), usage))
    return events


def _split(text: str) -> list[str]:
    """Split text into word-sized chunks, the way a streaming model would send it."""
    chunks: list[str] = []
    current = ""
    for char in text:
        current += char
        if char == " ":
            chunks.append(current)
            current = ""
    if current:
        chunks.append(current)
    return chunks
