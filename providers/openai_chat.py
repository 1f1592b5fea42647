"""OpenAI Chat Completions through the official `openai` SDK (imported lazily).

The same adapter serves OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio,
OpenRouter): what differs between them is data, `ChatQuirks`, not code paths. Streamed tool
calls are assembled by `ToolCallAccumulator`, keyed by `index` and tolerant of the local
servers' habits: whole arguments in one fragment (sometimes repeated), ids repeated on every
fragment or missing, all calls on index 0, no usage chunk.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from gosling.conversation import (
    Content,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
)
from gosling.providers.base import (
    Completed,
    ModelConfig,
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
from gosling.providers.errors import ServerError
from gosling.providers.sdk_provider import OpenAISdkProvider, parse_tool_arguments

if TYPE_CHECKING:
    from gosling.providers.deadlines import CallDeadlines
from gosling.providers.retry import RetryPolicy

DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class ChatQuirks:
    """How one Chat Completions server differs from OpenAI's. Data, not code paths."""

    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens"
    """OpenAI renamed `max_tokens`; most compatible servers only know the old name."""
    stream_usage: bool = True
    """Ask for the final usage chunk (`stream_options.include_usage`)."""
    whole_argument_chunks: bool = False
    """Fragments may carry the whole arguments, possibly more than once: a complete JSON
    object followed by another complete one replaces it instead of being appended. Off for
    OpenAI, where fragments are strictly pieces to concatenate."""
    reasoning_fields: tuple[str, ...] = ("reasoning_content", "reasoning")
    """Delta fields that carry reasoning text (vLLM, DeepSeek, Ollama, OpenRouter)."""
    overflow_patterns: tuple[str, ...] = ()
    """Extra regexes for this server's context-overflow errors."""
    system_role: Literal["system", "developer"] = "system"


def _call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: str = ""
    started: bool = False


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (json.JSONDecodeError, ValueError):
        return False


@dataclass
class ToolCallAccumulator:
    """Rebuilds streamed tool calls from `delta.tool_calls` fragments."""

    whole_argument_chunks: bool = False
    calls: list[_PendingCall] = field(default_factory=list)
    _slots: dict[Any, int] = field(default_factory=dict)

    def _slot(self, fragment: Mapping[str, Any]) -> _PendingCall:
        new_id = fragment.get("id") or ""
        key: Any = fragment.get("index")
        if key is None:
            if not new_id and self.calls and not self._starts_new_call(self.calls[-1], fragment):
                return self.calls[-1]
            key = ("id", new_id)
        position = self._slots.get(key)
        if position is not None and self._starts_new_call(self.calls[position], fragment):
            position = None
        if position is None:
            self.calls.append(_PendingCall())
            position = len(self.calls) - 1
            self._slots[key] = position
        return self.calls[position]

    @staticmethod
    def _starts_new_call(current: _PendingCall, fragment: Mapping[str, Any]) -> bool:
        """Some servers put every call on index 0. After a finished call, a fragment with
        another id, or (without ids) a named fragment with other arguments, is a new call.
        Plain continuation fragments carry neither and are decided without parsing."""
        new_id = fragment.get("id") or ""
        function = fragment.get("function") or {}
        piece = function.get("arguments") or ""
        if new_id and current.id:
            return new_id != current.id and _is_json_object(current.arguments)
        if not function.get("name") or not piece or piece == current.arguments:
            return False
        return _is_json_object(current.arguments)

    def feed(self, fragment: Mapping[str, Any]) -> list[StreamEvent]:
        call = self._slot(fragment)
        function = fragment.get("function") or {}
        call.id = call.id or fragment.get("id") or ""
        call.name = call.name or function.get("name") or ""
        events: list[StreamEvent] = []
        if not call.started and call.name:
            call.id = call.id or _call_id()
            call.started = True
            events.append(ToolRequestStarted(call.id, call.name))
        piece = function.get("arguments") or ""
        if piece:
            # A complete object followed by another complete object is the server repeating
            # the whole arguments, not two halves of one.
            replace = (
                self.whole_argument_chunks
                and _is_json_object(piece)
                and _is_json_object(call.arguments)
            )
            if not replace and call.started:
                events.append(ToolArgumentsDelta(call.id, piece))
            call.arguments = piece if replace else call.arguments + piece
        return events

    def finish(self) -> tuple[list[StreamEvent], list[ToolRequest]]:
        events: list[StreamEvent] = []
        requests: list[ToolRequest] = []
        for call in self.calls:
            call.id = call.id or _call_id()
            if not call.started:
                events.append(ToolRequestStarted(call.id, call.name))
            arguments, error = parse_tool_arguments(call.arguments)
            events.append(ToolRequestDone(call.id, call.name, arguments))
            requests.append(
                ToolRequest(id=call.id, name=call.name, arguments=arguments, error=error)
            )
        return events, requests


class OpenAIChatProvider(OpenAISdkProvider):
    """Any model behind a Chat Completions endpoint."""

    def __init__(
        self,
        model_config: ModelConfig,
        *,
        api_key: str,
        base_url: str = DEFAULT_BASE_URL,
        quirks: ChatQuirks | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 600.0,
        deadlines: CallDeadlines | None = None,
        name: str = "openai",
        auth_hint: str | None = "set OPENAI_API_KEY",
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        self.quirks = quirks or ChatQuirks()
        super().__init__(
            model_config,
            api_key=api_key,
            base_url=base_url,
            name=name,
            retry=retry,
            timeout=timeout,
            deadlines=deadlines,
            auth_hint=auth_hint,
            default_headers=default_headers,
            extra_overflow_patterns=self.quirks.overflow_patterns,
        )

    def request_params(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec], model: str
    ) -> dict[str, Any]:
        wire: list[dict[str, Any]] = []
        if system:
            wire.append({"role": self.quirks.system_role, "content": system})
        wire.extend(to_wire_messages(messages))
        params: dict[str, Any] = {"model": model, "messages": wire}
        if tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema,
                    },
                }
                for t in tools
            ]
        if self.model_config.max_output_tokens:
            params[self.quirks.max_tokens_field] = self.model_config.max_output_tokens
        if self.model_config.temperature is not None:
            params["temperature"] = self.model_config.temperature
        return params

    def _stream_params(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.quirks.stream_usage:
            return {**params, "stream_options": {"include_usage": True}}
        return params

    def _endpoint(self) -> Any:
        return self.client().chat.completions

    def _assembler(self) -> ChatStreamAssembler:
        return ChatStreamAssembler(self.name, self.quirks)

    def _completed(self, reply: dict[str, Any]) -> Completed:
        return completed_from_completion(reply, self.quirks)


# -- conversation -> wire ---------------------------------------------------------------------


def _data_url(part: ImageContent) -> str:
    return f"data:{part.mime_type};base64,{part.data}"


def _user_content(parts: Sequence[TextContent | ImageContent]) -> str | list[dict[str, Any]]:
    if all(isinstance(p, TextContent) for p in parts):
        return "\n".join(p.text for p in parts if isinstance(p, TextContent))
    return [
        {"type": "text", "text": p.text}
        if isinstance(p, TextContent)
        else {"type": "image_url", "image_url": {"url": _data_url(p)}}
        for p in parts
    ]


def to_wire_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Chat messages: tool results become `tool` messages (images from them follow in a
    user message, since tool messages carry only text); thinking is not sent back."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "assistant":
            text = "".join(p.text for p in message.content if isinstance(p, TextContent))
            calls = [
                {
                    "id": p.id,
                    "type": "function",
                    "function": {"name": p.name, "arguments": json.dumps(p.arguments)},
                }
                for p in message.content
                if isinstance(p, ToolRequest)
            ]
            if not text and not calls:
                continue
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            wire.append(entry)
            continue
        user_parts: list[TextContent | ImageContent] = []
        tool_images: list[TextContent | ImageContent] = []
        for part in message.content:
            if isinstance(part, ToolResponse):
                text = part.text()
                images = [c for c in part.content if isinstance(c, ImageContent)]
                if images:
                    tool_images.extend(images)
                    text = text or "(the result is the image below)"
                wire.append({"role": "tool", "tool_call_id": part.id, "content": text})
            elif (isinstance(part, TextContent) and part.text) or isinstance(part, ImageContent):
                user_parts.append(part)
        combined = tool_images + user_parts
        if combined:
            wire.append({"role": "user", "content": _user_content(combined)})
    return wire


# -- wire -> conversation ---------------------------------------------------------------------


def usage_from_wire(usage: Mapping[str, Any] | None, stop_reason: str | None) -> Usage:
    """`prompt_tokens` already includes cached tokens; OpenRouter adds cache writes."""
    if not usage:
        return Usage(stop_reason=stop_reason)
    details = usage.get("prompt_tokens_details") or {}
    prompt = usage.get("prompt_tokens")
    completion = usage.get("completion_tokens")
    return Usage(
        input_tokens=None if prompt is None else int(prompt),
        output_tokens=None if completion is None else int(completion),
        cache_read_tokens=int(details.get("cached_tokens") or 0),
        cache_write_tokens=int(details.get("cache_write_tokens") or 0),
        stop_reason=stop_reason,
    )


def _reasoning(container: Mapping[str, Any], fields: Sequence[str]) -> str:
    for name in fields:
        value = container.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def completed_from_completion(reply: Mapping[str, Any], quirks: ChatQuirks) -> Completed:
    choices = reply.get("choices") or [{}]
    choice = choices[0]
    message = choice.get("message") or {}
    content: list[Content] = []
    thinking = _reasoning(message, quirks.reasoning_fields)
    if thinking:
        content.append(ThinkingContent(thinking=thinking))
    if message.get("content"):
        content.append(TextContent(text=message["content"]))
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        arguments, error = parse_tool_arguments(function.get("arguments") or "")
        call_id = call.get("id") or _call_id()
        content.append(
            ToolRequest(id=call_id, name=function.get("name", ""), arguments=arguments, error=error)
        )
    usage = usage_from_wire(reply.get("usage"), choice.get("finish_reason"))
    return Completed(Message(role="assistant", content=tuple(content)), usage)


class ChatStreamAssembler:
    """Turns `chat.completion.chunk`s into gosling stream events and the final message."""

    def __init__(self, provider: str, quirks: ChatQuirks) -> None:
        self.provider = provider
        self.quirks = quirks
        self.text = ""
        self.thinking = ""
        self.tools = ToolCallAccumulator(whole_argument_chunks=quirks.whole_argument_chunks)
        self.usage: Mapping[str, Any] | None = None
        self.finish_reason: str | None = None

    def feed(self, chunk: Mapping[str, Any]) -> list[StreamEvent]:
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        events: list[StreamEvent] = []
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            reasoning = _reasoning(delta, self.quirks.reasoning_fields)
            if reasoning:
                self.thinking += reasoning
                events.append(ThinkingDelta(reasoning))
            if delta.get("content"):
                self.text += delta["content"]
                events.append(TextDelta(delta["content"]))
            for fragment in delta.get("tool_calls") or []:
                events.extend(self.tools.feed(fragment))
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return events

    def finish(self) -> list[StreamEvent]:
        if self.finish_reason is None:
            raise ServerError("the stream ended without a finish_reason", provider=self.provider)
        events, requests = self.tools.finish()
        content: list[Content] = []
        if self.thinking:
            content.append(ThinkingContent(thinking=self.thinking))
        if self.text:
            content.append(TextContent(text=self.text))
        content.extend(requests)
        usage = usage_from_wire(self.usage, self.finish_reason)
        message = Message(role="assistant", content=tuple(content))
        return [*events, UsageReported(usage), Completed(message, usage)]
