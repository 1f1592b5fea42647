"""Anthropic Messages API through the official `anthropic` SDK (imported lazily).

Wire mapping, both ways, happens only here:
- tool results travel as `tool_result` blocks in user turns, first in their message;
- thinking blocks go back with their signature and redacted thinking unchanged (required
  for tool use with extended thinking); thinking from other providers is dropped;
- prompt-cache breakpoints sit on the system prompt (which also covers the tools before it)
  and on the last two user messages, so each turn reads the previous turn's prefix; the
  per-turn context message (kind `TURN_CONTEXT_KIND`, sent after tool results) stays after
  the last breakpoint (after the user's own text the block is inside that message); a user
  message the context pipeline marks `cache_anchor` (the end of what no trim will change)
  gets the fourth, so a trim further back than 20 blocks still reads everything before it;
- usage: `input_tokens` counts everything, cache reads and writes included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

from gosling.conversation import (
    TURN_CONTEXT_KIND,
    Content,
    ImageContent,
    Message,
    RedactedThinkingContent,
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
from gosling.providers.registry import lookup_model
from gosling.providers.sdk_provider import (
    OPENAI_REASONING_PREFIX,
    SdkProvider,
    parse_tool_arguments,
    tls_context_for,
)

if TYPE_CHECKING:
    from gosling.providers.deadlines import CallDeadlines
from gosling.providers.retry import RetryPolicy

DEFAULT_BASE_URL = "https://api.anthropic.com"
ONE_MILLION_BETA = "context-1m-2025-08-07"

Thinking = int | Literal["adaptive"] | None


class AnthropicProvider(SdkProvider):
    """Claude models through the Messages API."""

    def __init__(
        self,
        model_config: ModelConfig,
        *,
        api_key: str,
        base_url: str = DEFAULT_BASE_URL,
        thinking: Thinking = None,
        retry: RetryPolicy | None = None,
        timeout: float = 600.0,
        deadlines: CallDeadlines | None = None,
        name: str = "anthropic",
        auth_hint: str | None = "set ANTHROPIC_API_KEY",
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
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
        )
        self.thinking = thinking
        """A thinking budget in tokens, "adaptive" (Opus 4.6+), or None for no thinking."""

    def _sdk(self) -> ModuleType:
        import anthropic

        return anthropic

    def _build_client(self) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(
            api_key=self.api_key,
            base_url=self.base_url,
            max_retries=0,
            timeout=self.httpx_timeout(),
            default_headers=self.default_headers or None,
            http_client=anthropic.DefaultAsyncHttpxClient(verify=tls_context_for(self.base_url)),
        )

    # -- requests ---------------------------------------------------------------------------

    def request_params(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec], model: str
    ) -> dict[str, Any]:
        """The keyword arguments of `messages.create` for this conversation."""
        params: dict[str, Any] = {
            "model": model,
            "max_tokens": self.model_config.max_output_tokens
            or lookup_model(model).max_output_tokens
            or 8192,
            "messages": to_wire_messages(messages),
        }
        if model.lower().endswith("[1m]"):
            params["model"] = model[: -len("[1m]")]
            params["extra_headers"] = {"anthropic-beta": ONE_MILLION_BETA}
        if system:
            params["system"] = [
                {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}
            ]
        if tools:
            params["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema}
                for t in tools
            ]
        if self.thinking == "adaptive":
            params["thinking"] = {"type": "adaptive"}
        elif isinstance(self.thinking, int):
            params["thinking"] = {"type": "enabled", "budget_tokens": self.thinking}
        elif self.model_config.temperature is not None:
            params["temperature"] = self.model_config.temperature
        return params

    def _endpoint(self) -> Any:
        return self.client().messages

    def _assembler(self) -> StreamAssembler:
        return StreamAssembler(self.name)

    def _completed(self, reply: dict[str, Any]) -> Completed:
        return completed_from_message(reply)


# -- conversation -> wire ---------------------------------------------------------------------


def _image_block(part: ImageContent) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": part.mime_type, "data": part.data},
    }


def _tool_result_block(part: ToolResponse) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for item in part.content:
        if isinstance(item, TextContent):
            if item.text:
                content.append({"type": "text", "text": item.text})
        else:
            content.append(_image_block(item))
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.id, "content": content}
    if part.is_error:
        block["is_error"] = True
    return block


def _blocks(message: Message) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ToolResponse):
            results.append(_tool_result_block(part))
        elif isinstance(part, TextContent):
            if part.text.strip():
                others.append({"type": "text", "text": part.text})
        elif isinstance(part, ImageContent):
            others.append(_image_block(part))
        elif isinstance(part, ToolRequest):
            others.append(
                {"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments}
            )
        elif isinstance(part, ThinkingContent) and message.role == "assistant":
            if part.signature and not part.signature.startswith(OPENAI_REASONING_PREFIX):
                others.append(
                    {"type": "thinking", "thinking": part.thinking, "signature": part.signature}
                )
        elif isinstance(part, RedactedThinkingContent) and message.role == "assistant":
            others.append({"type": "redacted_thinking", "data": part.data})
    # Tool results must open the user turn that answers the tool calls.
    return results + others


def to_wire_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages as the Messages API wants them: alternating roles (consecutive messages of
    one role merged), no empty turns, cache breakpoints on the last two user turns and on
    the user message marked `cache_anchor` (with the system prompt's, four at most).

    A breakpoint goes on the last block of a turn that is not per-turn context (that block
    changes every call, so the cached prefix ends just before it); a turn that holds only
    per-turn context carries none."""
    wire: list[dict[str, Any]] = []
    cacheable: list[int] = []
    """Per wire turn: how many of its leading blocks may carry a breakpoint."""
    for message in messages:
        blocks = _blocks(message)
        if not blocks:
            continue
        if message.metadata.cache_anchor and message.role == "user":
            blocks[-1] = {**blocks[-1], "cache_control": {"type": "ephemeral"}}
        volatile = message.metadata.kind == TURN_CONTEXT_KIND
        if wire and wire[-1]["role"] == message.role:
            merged = wire[-1]["content"] + blocks
            if message.role == "user":
                merged = [b for b in merged if b["type"] == "tool_result"] + [
                    b for b in merged if b["type"] != "tool_result"
                ]
            wire[-1]["content"] = merged
            if not volatile:
                cacheable[-1] = len(merged)
        else:
            wire.append({"role": message.role, "content": blocks})
            cacheable.append(0 if volatile else len(blocks))
    user_turns = [
        (turn, count)
        for turn, count in zip(wire, cacheable, strict=True)
        if turn["role"] == "user" and count > 0
    ]
    for turn, count in user_turns[-2:]:
        content = turn["content"]
        content[count - 1] = {**content[count - 1], "cache_control": {"type": "ephemeral"}}
    return wire


# -- wire -> conversation ---------------------------------------------------------------------


def usage_from_wire(usage: Mapping[str, Any], stop_reason: str | None) -> Usage:
    """Anthropic reports uncached input apart from cache reads and writes; gosling's
    `input_tokens` is their sum."""
    read = int(usage.get("cache_read_input_tokens") or 0)
    write = int(usage.get("cache_creation_input_tokens") or 0)
    uncached = usage.get("input_tokens")
    output = usage.get("output_tokens")
    return Usage(
        input_tokens=None if uncached is None else int(uncached) + read + write,
        output_tokens=None if output is None else int(output),
        cache_read_tokens=read,
        cache_write_tokens=write,
        stop_reason=stop_reason,
    )


def _content_from_block(block: Mapping[str, Any]) -> Content | None:
    kind = block.get("type")
    if kind == "text":
        return TextContent(text=block.get("text") or "")
    if kind == "thinking":
        return ThinkingContent(
            thinking=block.get("thinking") or "", signature=block.get("signature") or ""
        )
    if kind == "redacted_thinking":
        return RedactedThinkingContent(data=block.get("data") or "")
    if kind == "tool_use":
        raw = block.get("input")
        return ToolRequest(
            id=block["id"], name=block["name"], arguments=raw if isinstance(raw, dict) else {}
        )
    return None


def completed_from_message(reply: Mapping[str, Any]) -> Completed:
    """A non-streamed Messages reply as a `Completed` event."""
    content = [c for b in reply.get("content") or [] if (c := _content_from_block(b)) is not None]
    usage = usage_from_wire(reply.get("usage") or {}, reply.get("stop_reason"))
    return Completed(Message(role="assistant", content=tuple(content)), usage)


class StreamAssembler:
    """Turns Messages stream events into gosling stream events and the final message."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.blocks: dict[int, dict[str, Any]] = {}
        self.usage: dict[str, Any] = {}
        self.stop_reason: str | None = None
        self.stopped = False

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        kind = event.get("type")
        if kind == "message_start":
            self.usage.update((event.get("message") or {}).get("usage") or {})
            return []
        if kind == "content_block_start":
            block = dict(event.get("content_block") or {})
            if block.get("type") == "tool_use":
                block["partial_json"] = ""
            self.blocks[int(event.get("index", len(self.blocks)))] = block
            if block.get("type") == "tool_use":
                return [ToolRequestStarted(block["id"], block["name"])]
            if block.get("type") == "text" and block.get("text"):
                return [TextDelta(block["text"])]
            return []
        if kind == "content_block_delta":
            return self._delta(int(event.get("index", 0)), event.get("delta") or {})
        if kind == "content_block_stop":
            block = self.blocks.get(int(event.get("index", 0))) or {}
            if block.get("type") == "tool_use":
                arguments, error = parse_tool_arguments(block.pop("partial_json", ""))
                block["input"] = arguments
                block["error"] = error
                return [ToolRequestDone(block["id"], block["name"], arguments)]
            return []
        if kind == "message_delta":
            self.stop_reason = (event.get("delta") or {}).get("stop_reason") or self.stop_reason
            self.usage.update(
                {k: v for k, v in (event.get("usage") or {}).items() if v is not None}
            )
            return []
        if kind == "message_stop":
            self.stopped = True
        return []

    def _delta(self, index: int, delta: Mapping[str, Any]) -> list[StreamEvent]:
        block = self.blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = (block.get("text") or "") + delta.get("text", "")
            return [TextDelta(delta.get("text", ""))]
        if kind == "thinking_delta":
            block["thinking"] = (block.get("thinking") or "") + delta.get("thinking", "")
            return [ThinkingDelta(delta.get("thinking", ""))]
        if kind == "signature_delta":
            block["signature"] = (block.get("signature") or "") + delta.get("signature", "")
        elif kind == "input_json_delta":
            piece = delta.get("partial_json", "")
            block["partial_json"] = block.get("partial_json", "") + piece
            if piece:
                return [ToolArgumentsDelta(block["id"], piece)]
        return []

    def finish(self) -> list[StreamEvent]:
        if not self.stopped:
            raise ServerError("the stream ended before message_stop", provider=self.provider)
        content: list[Content] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            part = _content_from_block(block)
            if isinstance(part, ToolRequest) and block.get("error"):
                part = part.model_copy(update={"error": block["error"]})
            if part is not None and not (isinstance(part, TextContent) and not part.text):
                content.append(part)
        usage = usage_from_wire(self.usage, self.stop_reason)
        message = Message(role="assistant", content=tuple(content))
        return [UsageReported(usage), Completed(message, usage)]
