"""Converters between gosling's messages and the message dicts of the three wire APIs.

`to_*` give what the SDKs take (`client.chat.completions.create(messages=...)`,
`client.responses.create(input=...)`, `client.messages.create(messages=...)`), built by the
same code the providers send with (Anthropic's cache breakpoints left out). `from_*` read such
dicts back (a model's replies included) and return `Converted(system, messages)`: the system
or developer text, and the rest as messages. The reading is strict: a part gosling has no
word for raises `ValueError` naming it, rather than being dropped.

Layout rules (gosling's own): tool results live in a user message, and a user message right
after tool results joins them (so a round trip keeps one message per turn); thinking is kept
where the API can carry it back (Anthropic's signed thinking, Responses reasoning items).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from gosling.conversation import (
    Content,
    ImageContent,
    Message,
    RedactedThinkingContent,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
)


class Converted(NamedTuple):
    """What a `from_*` converter read: `system, messages = from_openai_chat(dicts)`."""

    system: str
    """The system (and developer) text, joined by blank lines; empty when there was none."""
    messages: list[Message]


_SYSTEM_ROLES = ("system", "developer")


# -- to the wire ------------------------------------------------------------------------------


def to_openai_chat(messages: Sequence[Message], *, system: str = "") -> list[dict[str, Any]]:
    """Chat Completions messages (a leading `system` message when `system` is given). Only
    agent-visible messages are converted; thinking is not sent back by this API."""
    from gosling.providers.openai_chat import to_wire_messages

    wire = to_wire_messages(_visible(messages))
    return ([{"role": "system", "content": system}] if system else []) + wire


def to_openai_responses(messages: Sequence[Message], *, system: str = "") -> list[dict[str, Any]]:
    """Responses API input items (a leading `system` item when `system` is given; the API's
    `instructions` parameter is the other place for it)."""
    from gosling.providers.openai_responses import to_wire_items

    items = to_wire_items(_visible(messages))
    return ([{"role": "system", "content": system}] if system else []) + items


def to_anthropic(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Anthropic Messages API messages; the system prompt is the API's separate `system`
    parameter. Consecutive messages of one role are merged, as the API requires."""
    from gosling.providers.anthropic import to_wire_messages

    wire = to_wire_messages(_visible(messages))
    for turn in wire:
        turn["content"] = [
            {k: v for k, v in block.items() if k != "cache_control"} for block in turn["content"]
        ]
    return wire


def _visible(messages: Sequence[Message]) -> list[Message]:
    return [m for m in messages if m.metadata.agent_visible]


# -- from the wire ----------------------------------------------------------------------------


def from_openai_chat(messages: Iterable[Mapping[str, Any]]) -> Converted:
    """Chat Completions messages (requests or replies) as gosling messages."""
    out = _Builder()
    for index, message in enumerate(messages):
        where = f"message {index}"
        role = _role(message, where)
        content = message.get("content")
        if role in _SYSTEM_ROLES:
            out.system(_plain_text(content, where))
        elif role == "user":
            out.add("user", _chat_parts(content, where))
        elif role == "assistant":
            parts: list[Content] = []
            reasoning = message.get("reasoning_content")
            if isinstance(reasoning, str) and reasoning:
                parts.append(ThinkingContent(thinking=reasoning))
            parts += _chat_parts(content, where, assistant=True)
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                parts.append(_tool_request(call.get("id"), function.get("name"), function, where))
            out.add("assistant", parts)
        elif role == "tool":
            call_id = _required_str(message, "tool_call_id", where)
            result = _chat_parts(content, where)
            out.add("user", [ToolResponse(id=call_id, content=tuple(result))], tool=True)
        else:
            raise ValueError(f"{where}: role {role!r} cannot be converted (legacy 'function'?)")
    return out.done()


def from_openai_responses(items: Iterable[Mapping[str, Any]]) -> Converted:
    """Responses API input or output items as gosling messages."""
    out = _Builder()
    for index, item in enumerate(items):
        where = f"item {index}"
        kind = item.get("type", "message")
        if kind == "message":
            role = _role(item, where)
            content = item.get("content")
            if role in _SYSTEM_ROLES:
                out.system(_plain_text(content, where))
            elif role in ("user", "assistant"):
                out.add(role, _chat_parts(content, where, assistant=role == "assistant"))
            else:
                raise ValueError(f"{where}: role {role!r} cannot be converted")
        elif kind == "function_call":
            call_id = item.get("call_id") or item.get("id")
            out.add("assistant", [_tool_request(call_id, item.get("name"), item, where)])
        elif kind == "function_call_output":
            call_id = _required_str(item, "call_id", where)
            output = item.get("output")
            parts = _chat_parts(output, where) if output is not None else []
            out.add("user", [ToolResponse(id=call_id, content=tuple(parts))], tool=True)
        elif kind == "reasoning":
            from gosling.providers.openai_responses import encode_reasoning

            summary = "\n\n".join(s.get("text", "") for s in item.get("summary") or [])
            out.add(
                "assistant", [ThinkingContent(thinking=summary, signature=encode_reasoning(item))]
            )
        else:
            raise ValueError(f"{where}: item type {kind!r} cannot be converted")
    return out.done()


def from_anthropic(
    messages: Iterable[Mapping[str, Any]], *, system: str | Sequence[Mapping[str, Any]] = ""
) -> Converted:
    """Anthropic Messages API messages (and its `system` parameter) as gosling messages."""
    out = _Builder()
    if system:
        out.system(system if isinstance(system, str) else _plain_text(list(system), "system"))
    for index, message in enumerate(messages):
        where = f"message {index}"
        role = _role(message, where)
        if role not in ("user", "assistant"):
            raise ValueError(f"{where}: role {role!r} is not an Anthropic role (user, assistant)")
        content = message.get("content")
        blocks: list[Any] = (
            [{"type": "text", "text": content}]
            if isinstance(content, str)
            else (list(content or []))
        )
        results: list[Content] = []
        others: list[Content] = []
        for number, block in enumerate(blocks):
            part = _anthropic_part(block, f"{where} block {number}")
            if part is not None:
                (results if isinstance(part, ToolResponse) else others).append(part)
        if results:
            out.add("user", results, tool=True)
        if others:
            out.add(role, others)
    return out.done()


def _anthropic_part(block: Mapping[str, Any], where: str) -> Content | None:
    kind = block.get("type")
    if kind == "text":
        text = block.get("text") or ""
        return TextContent(text=text) if text else None
    if kind == "image":
        return _anthropic_image(block, where)
    if kind == "tool_use":
        raw = block.get("input")
        arguments = raw if isinstance(raw, dict) else {}
        return ToolRequest(
            id=_required_str(block, "id", where),
            name=_required_str(block, "name", where),
            arguments=arguments,
        )
    if kind == "tool_result":
        content = block.get("content")
        items: list[Any] = (
            [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        )
        parts: list[TextContent | ImageContent] = []
        for item in items:
            if item.get("type") == "text":
                if item.get("text"):
                    parts.append(TextContent(text=item["text"]))
            elif item.get("type") == "image":
                parts.append(_anthropic_image(item, where))
            else:
                raise ValueError(f"{where}: tool_result part {item.get('type')!r} is unknown")
        return ToolResponse(
            id=_required_str(block, "tool_use_id", where),
            content=tuple(parts),
            is_error=bool(block.get("is_error")),
        )
    if kind == "thinking":
        return ThinkingContent(
            thinking=block.get("thinking") or "", signature=block.get("signature") or ""
        )
    if kind == "redacted_thinking":
        return RedactedThinkingContent(data=block.get("data") or "")
    raise ValueError(f"{where}: block type {kind!r} cannot be converted")


def _anthropic_image(block: Mapping[str, Any], where: str) -> ImageContent:
    source = block.get("source") or {}
    if source.get("type") != "base64":
        raise ValueError(f"{where}: only base64 images can be converted (got {source!r:.80})")
    return ImageContent(data=source.get("data", ""), mime_type=source.get("media_type", ""))


# -- shared -----------------------------------------------------------------------------------


def _role(message: Mapping[str, Any], where: str) -> str:
    if not isinstance(message, Mapping):
        raise ValueError(f"{where} is a {type(message).__name__}, not a message dict")
    role = message.get("role")
    if not isinstance(role, str):
        raise ValueError(f"{where} has no 'role'")
    return role


def _required_str(value: Mapping[str, Any], key: str, where: str) -> str:
    found = value.get(key)
    if not isinstance(found, str) or not found:
        raise ValueError(f"{where} has no {key!r}")
    return found


def _tool_request(call_id: Any, name: Any, holder: Mapping[str, Any], where: str) -> ToolRequest:
    from gosling.providers.sdk_provider import parse_tool_arguments

    if not isinstance(call_id, str) or not call_id:
        raise ValueError(f"{where}: a tool call has no id")
    raw = holder.get("arguments")
    if isinstance(raw, dict):
        arguments, error = raw, None
    else:
        arguments, error = parse_tool_arguments(raw if isinstance(raw, str) else json.dumps(raw))
    return ToolRequest(id=call_id, name=str(name or ""), arguments=arguments, error=error)


def _chat_parts(
    content: Any, where: str, *, assistant: bool = False
) -> list[TextContent | ImageContent]:
    """OpenAI content (a string or a list of parts) as text and image parts."""
    if content is None:
        return []
    if isinstance(content, str):
        return [TextContent(text=content)] if content else []
    parts: list[TextContent | ImageContent] = []
    for item in content:
        kind = item.get("type") if isinstance(item, Mapping) else None
        if kind in ("text", "input_text", "output_text", "refusal"):
            text = item.get("text") or item.get("refusal") or ""
            if text:
                parts.append(TextContent(text=text))
        elif kind in ("image_url", "input_image") and not assistant:
            field = item.get("image_url")
            url = field.get("url") if isinstance(field, Mapping) else field
            parts.append(_data_url_image(url, where))
        else:
            raise ValueError(f"{where}: content part {kind!r} cannot be converted")
    return parts


def _data_url_image(url: Any, where: str) -> ImageContent:
    if not isinstance(url, str) or not url.startswith("data:") or ";base64," not in url:
        shown = url[:60] if isinstance(url, str) else url
        raise ValueError(
            f"{where}: only inline images (data:<type>;base64,...) can be converted, not {shown!r}"
        )
    header, data = url[5:].split(";base64,", 1)
    return ImageContent(data=data, mime_type=header or "image/png")


def _plain_text(content: Any, where: str) -> str:
    return "\n".join(p.text for p in _chat_parts(content, where) if isinstance(p, TextContent))


class _Builder:
    def __init__(self) -> None:
        self._system: list[str] = []
        self._messages: list[Message] = []
        self._last_tool = False

    def system(self, text: str) -> None:
        if text:
            self._system.append(text)

    def add(self, role: str, parts: Sequence[Content], *, tool: bool = False) -> None:
        """Append `parts`: tool results join the user message of earlier results, a user
        message right after results joins them, an assistant part joins the reply it
        continues (Responses items come one part at a time)."""
        if not parts:
            return
        last = self._messages[-1] if self._messages else None
        joins = (
            last is not None
            and last.role == role
            and ((role == "user" and self._last_tool) or (role == "assistant" and self._piecewise))
        )
        if joins and last is not None:
            self._messages[-1] = last.with_content((*last.content, *parts))
        else:
            self._messages.append(
                Message(role="user" if role == "user" else "assistant", content=tuple(parts))
            )
        self._last_tool = tool
        self._piecewise = role == "assistant"

    _piecewise = False

    def done(self) -> Converted:
        return Converted("\n\n".join(self._system), self._messages)
