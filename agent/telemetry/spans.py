"""The spans of a turn, in the GenAI semantic conventions, built from what already happens.

- `invoke_agent gosling`: one per turn, the root of its own trace (linked to a batch's
  span when `GOSLING_TRACE_LINK` or `Tracing(link=...)` names one);
- `chat <model>`: every model call, the summarizer's too, from `TracedProvider` (usage
  with cache read and creation tokens, finish reason);
- `execute_tool <name>`: every tool call, from its `ToolCall` to its `ToolResult` event
  (exit status, whether it was approved);
- `gosling.compaction` (the summarizer's call inside it) and `gosling.context_trim` (a
  masking, fold or pair-summary step), with tokens before and after and the trigger.

Turn, tool and context spans come from the reply's events, so the loop stays as it was;
the turn's and a compaction's span are made current while the reply runs, so model calls
nest under them. Prompts, replies, tool arguments and results go on spans only when
content capture is on, and always through the redactor.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from gosling.agent.events import (
    CompactionFinished,
    CompactionRefused,
    CompactionStarted,
    ContextTrimmed,
    ErrorEvent,
    Event,
    PermissionRequest,
    ToolCall,
    ToolResult,
    TurnFinished,
)
from gosling.agent.telemetry import otel
from gosling.agent.telemetry.settings import TraceSettings
from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse
from gosling.providers import Completed, Provider, ToolSpec, Usage
from gosling.redact import redact, redact_json

if TYPE_CHECKING:
    from contextvars import Token

    from opentelemetry.context import Context

    from gosling.agent.session import AgentSession
    from gosling.providers.base import StreamEvent


def link_from(traceparent: str | None) -> list[Link]:
    """A link to the span a W3C `traceparent` names (none when it names none)."""
    if not traceparent:
        return []
    ctx = TraceContextTextMapPropagator().extract({"traceparent": traceparent})
    span_context = trace.get_current_span(ctx).get_span_context()
    return [Link(span_context)] if span_context.is_valid else []


def traceparent_of(span: Any) -> str:
    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier, trace.set_span_in_context(span))
    return carrier["traceparent"]


def usage_attributes(usage: Usage) -> dict[str, Any]:
    """`gen_ai.usage.*`: input counts every input token, cached or not (as the conventions
    ask, and as `Usage` keeps it)."""
    attributes: dict[str, Any] = {
        "gen_ai.usage.cache_read.input_tokens": usage.cache_read_tokens,
        "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens,
    }
    if usage.input_tokens is not None:
        attributes["gen_ai.usage.input_tokens"] = usage.input_tokens
    if usage.output_tokens is not None:
        attributes["gen_ai.usage.output_tokens"] = usage.output_tokens
    return attributes


class Tracing:
    """Tracing for one agent: its tracer, the batch link, whether content is captured."""

    def __init__(self, config: TraceSettings, *, link: str | None = None) -> None:
        self.config = config
        self.tracer = otel.tracer(config)
        self.links = link_from(link)

    def wrap(self, provider: Provider) -> Provider:
        return provider if isinstance(provider, TracedProvider) else TracedProvider(provider, self)

    def flush(self) -> None:
        otel.flush(self.config)

    async def turn(
        self, session: AgentSession, provider: Provider, events: AsyncGenerator[Event]
    ) -> AsyncGenerator[Event]:
        """`events` (one turn's) passed through unchanged, with its spans recorded."""
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "gosling",
            "gen_ai.provider.name": provider.name,
            "gen_ai.system": provider.name,
            "gen_ai.request.model": provider.model_config.model,
        }
        if session.id is not None:
            attributes["gen_ai.conversation.id"] = session.id
        root = self.tracer.start_span(
            "invoke_agent gosling",
            context=otel_context.Context(),
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            links=self.links,
        )
        recorder = _TurnRecorder(self, root)
        tokens = [otel_context.attach(trace.set_span_in_context(root))]
        try:
            async for event in events:
                recorder.record(event, tokens)
                yield event
        finally:
            await events.aclose()
            recorder.close(tokens)


class _TurnRecorder:
    def __init__(self, tracing: Tracing, root: Any) -> None:
        self.tracing = tracing
        self.root = root
        self.tools: dict[str, Any] = {}
        self.approved: dict[str, bool] = {}
        self.compaction: Any = None

    def record(self, event: Event, tokens: list[Token[Context]]) -> None:
        tracer = self.tracing.tracer
        parent = trace.set_span_in_context(self.root)
        if isinstance(event, ToolCall):
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": event.name,
                "gen_ai.tool.call.id": event.id,
            }
            if self.tracing.config.capture_content:
                attributes["gen_ai.tool.call.arguments"] = redact_json(
                    json.dumps(event.arguments, default=str)
                )
            self.tools[event.id] = tracer.start_span(
                f"execute_tool {event.name}", context=parent, attributes=attributes
            )
        elif isinstance(event, PermissionRequest) and event.granted is not None:
            self.approved[event.id] = event.granted
        elif isinstance(event, ToolResult):
            span = self.tools.pop(event.id, None)
            if span is None:
                return
            approved = self.approved.get(event.id, True)
            status = "refused" if not approved else ("error" if event.is_error else "ok")
            span.set_attribute("gosling.tool.approved", approved)
            span.set_attribute("gosling.tool.status", status)
            if event.is_error:
                span.set_attribute("error.type", "tool_error")
                span.set_status(Status(StatusCode.ERROR))
            if self.tracing.config.capture_content:
                span.set_attribute("gen_ai.tool.call.result", redact(event.output))
            span.end()
        elif isinstance(event, CompactionStarted):
            self.compaction = tracer.start_span(
                "gosling.compaction",
                context=parent,
                attributes={
                    "gen_ai.operation.name": "compaction",
                    "gosling.compaction.trigger": event.trigger,
                    "gosling.tokens_before": event.tokens_before,
                },
            )
            tokens.append(otel_context.attach(trace.set_span_in_context(self.compaction)))
        elif isinstance(event, CompactionFinished) and self.compaction is not None:
            self.compaction.set_attribute("gosling.tokens_after", event.tokens_after)
            self.compaction.set_attribute("gosling.compaction.structured", event.structured)
            self._end_compaction(tokens)
        elif isinstance(event, CompactionRefused) and self.compaction is not None:
            self.compaction.set_attribute("gosling.compaction.refused", event.text)
            self._end_compaction(tokens)
        elif isinstance(event, ContextTrimmed):
            attributes = {
                "gen_ai.operation.name": "context_trim",
                "gosling.trim.strategy": event.strategy,
                "gosling.trim.tool_calls": len(event.tool_ids),
            }
            if event.tokens_before is not None:
                attributes["gosling.tokens_before"] = event.tokens_before
            if event.tokens_after is not None:
                attributes["gosling.tokens_after"] = event.tokens_after
            tracer.start_span("gosling.context_trim", context=parent, attributes=attributes).end()
        elif isinstance(event, ErrorEvent):
            self.root.set_attribute("error.type", event.kind)
            self.root.set_status(Status(StatusCode.ERROR, event.message[:200]))
            if self.compaction is not None:
                self.compaction.set_status(Status(StatusCode.ERROR))
                self._end_compaction(tokens)
        elif isinstance(event, TurnFinished):
            self.root.set_attribute("gosling.stop_reason", event.stop_reason)
            self.root.set_attribute("gosling.model_calls", event.turns)
            for key, value in usage_attributes(event.usage).items():
                self.root.set_attribute(key, value)

    def _end_compaction(self, tokens: list[Token[Context]]) -> None:
        self.compaction.end()
        self.compaction = None
        if len(tokens) > 1:
            otel_context.detach(tokens.pop())

    def close(self, tokens: list[Token[Context]]) -> None:
        for span in [*self.tools.values(), self.compaction]:
            if span is not None:
                span.end()
        while tokens:
            otel_context.detach(tokens.pop())
        self.root.end()


class TracedProvider(Provider):
    """`inner` with a `chat <model>` span around every call it makes."""

    def __init__(self, inner: Provider, tracing: Tracing) -> None:
        super().__init__(inner.model_config)
        self.inner = inner
        self.tracing = tracing
        self.name = inner.name

    @property
    def manages_own_context(self) -> bool:
        return self.inner.manages_own_context

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _start(self, system: str, messages: Sequence[Message], fast: bool) -> Any:
        config = self.inner.model_config
        model = (getattr(config, "fast_model", None) if fast else None) or config.model
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.inner.name,
            "gen_ai.system": self.inner.name,
            "gen_ai.request.model": model,
            "gosling.fast": fast,
        }
        if self.tracing.config.capture_content:
            attributes["gen_ai.system_instructions"] = redact(system)
            attributes["gen_ai.input.messages"] = redact_json(json.dumps(_messages(messages)))
        return self.tracing.tracer.start_span(
            f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes
        )

    def _finish(self, span: Any, reply: Message, usage: Usage) -> None:
        for key, value in usage_attributes(usage).items():
            span.set_attribute(key, value)
        if usage.stop_reason:
            span.set_attribute("gen_ai.response.finish_reasons", [usage.stop_reason])
        if self.tracing.config.capture_content:
            span.set_attribute(
                "gen_ai.output.messages", redact_json(json.dumps(_messages([reply])))
            )

    async def stream(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> AsyncIterator[StreamEvent]:
        span = self._start(system, messages, fast)
        try:
            async for event in self.inner.stream(system, messages, tools, fast=fast):
                if isinstance(event, Completed):
                    self._finish(span, event.message, event.usage)
                yield event
        except BaseException as exc:
            _failed(span, exc)
            raise
        finally:
            span.end()

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> tuple[Message, Usage]:
        span = self._start(system, messages, fast)
        try:
            reply, usage = await self.inner.complete(system, messages, tools, fast=fast)
            self._finish(span, reply, usage)
        except BaseException as exc:
            _failed(span, exc)
            raise
        finally:
            span.end()
        return reply, usage


def _failed(span: Any, exc: BaseException) -> None:
    span.set_attribute("error.type", type(exc).__name__)
    span.set_status(Status(StatusCode.ERROR, redact(str(exc))[:200]))


def _messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages in the conventions' shape: role and parts."""
    shaped = []
    for message in messages:
        parts: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, TextContent):
                parts.append({"type": "text", "content": part.text})
            elif isinstance(part, ToolRequest):
                parts.append(
                    {"type": "tool_call", "id": part.id, "name": part.name,
                     "arguments": part.arguments}
                )  # fmt: skip
            elif isinstance(part, ToolResponse):
                parts.append({"type": "tool_call_response", "id": part.id, "response": part.text()})
        shaped.append({"role": message.role, "parts": parts})
    return shaped
