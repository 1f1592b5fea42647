"""OpenAI Responses API through the official `openai` SDK (imported lazily).

Requests are stateless (`store=False`): the whole conversation is sent each turn, and
reasoning items come back encrypted (`include=["reasoning.encrypted_content"]`) so they can
be returned with the function calls they led to, as reasoning models require. A reasoning
item is kept as `ThinkingContent` whose signature holds the item's id and encrypted content.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

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
from gosling.providers.error_mapping import classify_error
from gosling.providers.errors import ProviderError, ServerError
from gosling.providers.sdk_provider import (
    OPENAI_REASONING_PREFIX,
    OpenAISdkProvider,
    parse_tool_arguments,
)

if TYPE_CHECKING:
    from gosling.providers.deadlines import CallDeadlines
from gosling.providers.retry import RetryPolicy

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIResponsesProvider(OpenAISdkProvider):
    """OpenAI models through the Responses API."""

    def __init__(
        self,
        model_config: ModelConfig,
        *,
        api_key: str,
        base_url: str = DEFAULT_BASE_URL,
        reasoning_effort: str | None = None,
        include_encrypted_reasoning: bool = True,
        retry: RetryPolicy | None = None,
        timeout: float = 600.0,
        deadlines: CallDeadlines | None = None,
        name: str = "openai-responses",
        auth_hint: str | None = "set OPENAI_API_KEY",
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
        self.reasoning_effort = reasoning_effort
        """"low" / "medium" / "high" for reasoning models; None leaves the model default."""
        self.include_encrypted_reasoning = include_encrypted_reasoning

    def request_params(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec], model: str
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"model": model, "input": to_wire_items(messages), "store": False}
        if system:
            params["instructions"] = system
        if tools:
            params["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                    "strict": False,
                }
                for t in tools
            ]
        if self.include_encrypted_reasoning:
            params["include"] = ["reasoning.encrypted_content"]
        if self.reasoning_effort:
            params["reasoning"] = {"effort": self.reasoning_effort, "summary": "auto"}
        if self.model_config.max_output_tokens:
            params["max_output_tokens"] = self.model_config.max_output_tokens
        if self.model_config.temperature is not None:
            params["temperature"] = self.model_config.temperature
        return params

    def _endpoint(self) -> Any:
        return self.client().responses

    def _assembler(self) -> ResponsesStreamAssembler:
        return ResponsesStreamAssembler(self.name)

    def _completed(self, reply: dict[str, Any]) -> Completed:
        return completed_from_response(reply, self.name)


# -- conversation -> wire ---------------------------------------------------------------------


def encode_reasoning(item: Mapping[str, Any]) -> str:
    payload = {"id": item.get("id"), "encrypted_content": item.get("encrypted_content")}
    return OPENAI_REASONING_PREFIX + json.dumps(payload)


def _reasoning_item(part: ThinkingContent) -> dict[str, Any] | None:
    if not part.signature.startswith(OPENAI_REASONING_PREFIX):
        return None  # another provider's thinking cannot be verified here
    payload = json.loads(part.signature[len(OPENAI_REASONING_PREFIX) :])
    summary = [{"type": "summary_text", "text": part.thinking}] if part.thinking else []
    item: dict[str, Any] = {"type": "reasoning", "id": payload.get("id"), "summary": summary}
    if payload.get("encrypted_content"):
        item["encrypted_content"] = payload["encrypted_content"]
    return item


def _user_item(parts: Sequence[TextContent | ImageContent]) -> dict[str, Any]:
    content = [
        {"type": "input_text", "text": p.text}
        if isinstance(p, TextContent)
        else {"type": "input_image", "image_url": f"data:{p.mime_type};base64,{p.data}"}
        for p in parts
    ]
    return {"role": "user", "content": content}


def to_wire_items(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Input items in conversation order: messages, reasoning items, function calls and
    their outputs."""
    items: list[dict[str, Any]] = []
    for message in messages:
        pending_user: list[TextContent | ImageContent] = []
        for part in message.content:
            if message.role == "assistant":
                if isinstance(part, TextContent) and part.text:
                    items.append({"role": "assistant", "content": part.text})
                elif isinstance(part, ToolRequest):
                    items.append(
                        {
                            "type": "function_call",
                            "call_id": part.id,
                            "name": part.name,
                            "arguments": json.dumps(part.arguments),
                        }
                    )
                elif isinstance(part, ThinkingContent) and (item := _reasoning_item(part)):
                    items.append(item)
            elif isinstance(part, ToolResponse):
                items.append(
                    {"type": "function_call_output", "call_id": part.id, "output": part.text()}
                )
                images = [c for c in part.content if isinstance(c, ImageContent)]
                pending_user.extend(images)
            elif (isinstance(part, TextContent) and part.text) or isinstance(part, ImageContent):
                pending_user.append(part)
        if pending_user:
            items.append(_user_item(pending_user))
    return items


# -- wire -> conversation ---------------------------------------------------------------------


def usage_from_wire(response: Mapping[str, Any]) -> Usage:
    usage = response.get("usage") or {}
    details = usage.get("input_tokens_details") or {}
    status = response.get("status")
    stop = (
        (response.get("incomplete_details") or {}).get("reason")
        if status == "incomplete"
        else status
    )
    return Usage(
        input_tokens=usage.get("input_tokens"),
        output_tokens=usage.get("output_tokens"),
        cache_read_tokens=int(details.get("cached_tokens") or 0),
        stop_reason=stop or status,
    )


def content_from_items(items: Sequence[Mapping[str, Any]]) -> list[Content]:
    content: list[Content] = []
    for item in items:
        kind = item.get("type")
        if kind == "reasoning":
            summary = "\n\n".join(s.get("text", "") for s in item.get("summary") or [])
            content.append(ThinkingContent(thinking=summary, signature=encode_reasoning(item)))
        elif kind == "message":
            text = "".join(
                c.get("text") or c.get("refusal") or ""
                for c in item.get("content") or []
                if c.get("type") in ("output_text", "refusal")
            )
            if text:
                content.append(TextContent(text=text))
        elif kind == "function_call":
            arguments, error = parse_tool_arguments(item.get("arguments") or "")
            content.append(
                ToolRequest(
                    id=item.get("call_id") or item.get("id", ""),
                    name=item.get("name", ""),
                    arguments=arguments,
                    error=error,
                )
            )
    return content


def _failure(provider: str, error: Mapping[str, Any] | None) -> ProviderError:
    return classify_error(provider=provider, status=None, body={"error": dict(error or {})})


def completed_from_response(response: Mapping[str, Any], provider: str) -> Completed:
    if response.get("status") == "failed":
        raise _failure(provider, response.get("error"))
    content = content_from_items(response.get("output") or [])
    return Completed(Message(role="assistant", content=tuple(content)), usage_from_wire(response))


class ResponsesStreamAssembler:
    """Turns Responses stream events into gosling stream events and the final message."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.items: dict[int, dict[str, Any]] = {}
        self.response: Mapping[str, Any] | None = None

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        kind = event.get("type", "")
        index = int(event.get("output_index", 0))
        if kind == "response.output_item.added":
            item = dict(event.get("item") or {})
            self.items[index] = item
            if item.get("type") == "function_call":
                return [ToolRequestStarted(item.get("call_id", ""), item.get("name", ""))]
        elif kind == "response.output_text.delta":
            return [TextDelta(event.get("delta", ""))]
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return [ThinkingDelta(event.get("delta", ""))]
        elif kind == "response.function_call_arguments.delta":
            item = self.items.get(index, {})
            return [ToolArgumentsDelta(item.get("call_id", ""), event.get("delta", ""))]
        elif kind == "response.output_item.done":
            item = dict(event.get("item") or {})
            self.items[index] = item
            if item.get("type") == "function_call":
                arguments, _ = parse_tool_arguments(item.get("arguments") or "")
                return [ToolRequestDone(item.get("call_id", ""), item.get("name", ""), arguments)]
        elif kind in ("response.completed", "response.incomplete"):
            self.response = event.get("response") or {}
        elif kind == "response.failed":
            raise _failure(self.provider, (event.get("response") or {}).get("error"))
        elif kind == "error":
            raise _failure(self.provider, event.get("error") or event)
        return []

    def finish(self) -> list[StreamEvent]:
        if self.response is None:
            raise ServerError("the stream ended before response.completed", provider=self.provider)
        items = self.response.get("output") or [self.items[i] for i in sorted(self.items)]
        message = Message(role="assistant", content=tuple(content_from_items(items)))
        usage = usage_from_wire(self.response)
        return [UsageReported(usage), Completed(message, usage)]
