"""OpenAI chat-completions message lists, the lingua franca of agent logs.

Accepted shapes: a JSON list of `{role, content, tool_calls, tool_call_id}` messages; an
object with such a list under `messages` (or `history`, as SWE-agent writes it); JSON Lines
with one message per line, or one `{"messages": [...]}` conversation per line (one transcript
each). Leading `system`/`developer` messages become the system prompt; later ones become
agent-only user messages. `reasoning_content` (DeepSeek and others) becomes thinking. Tool
messages answering one assistant message are joined into one user message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gosling.conversation import (
    Content,
    MessageMetadata,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
)
from gosling.sessions.importers._json import (
    as_dict,
    as_list,
    as_str,
    decode_arguments,
    iter_json_lines,
    literal_or_json,
    openai_content_parts,
)
from gosling.sessions.importers.builder import TranscriptBuilder
from gosling.sessions.importers.transcript import ImportedTranscript

CHAT_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_SYSTEM_ROLES = ("system", "developer")


def is_chat_message(value: Any) -> bool:
    return isinstance(value, dict) and as_str(value.get("role")) in CHAT_ROLES


def chat_messages_of(document: Any) -> list[Any] | None:
    """The message list of a chat document, or None when `document` is not one."""
    if isinstance(document, list):
        return document if document and all(is_chat_message(m) for m in document[:5]) else None
    if isinstance(document, dict):
        for key in ("messages", "history"):
            items = document.get(key)
            if isinstance(items, list) and items and is_chat_message(items[0]):
                return items
    return None


def parse_openai_chat_document(document: Any, source: str) -> list[ImportedTranscript]:
    items = chat_messages_of(document)
    builder = TranscriptBuilder()
    system = convert_chat_messages(items or [], builder)
    title = as_str(as_dict(document).get("title")) or as_str(as_dict(document).get("name"))
    return [builder.build("openai-chat", source=source, system_prompt=system, title=title)]


def parse_openai_chat_lines(text: str, source: str) -> list[ImportedTranscript]:
    """JSON Lines: one message per line (one transcript), or one conversation per line."""
    builder = TranscriptBuilder()
    values = list(iter_json_lines(text, builder))
    if any(chat_messages_of(v) is not None and not is_chat_message(v) for v in values):
        transcripts: list[ImportedTranscript] = []
        for value in values:
            if chat_messages_of(value) is None:
                continue
            transcripts.extend(parse_openai_chat_document(value, source))
        return transcripts
    system = convert_chat_messages(values, builder)
    return [builder.build("openai-chat", source=source, system_prompt=system)]


RoleHandler = Callable[[dict[str, Any]], None]


def convert_chat_messages(
    items: Sequence[Any],
    builder: TranscriptBuilder,
    *,
    extra_roles: Mapping[str, RoleHandler] | None = None,
) -> str | None:
    """Feed chat messages to `builder`; returns the system prompt.

    `extra_roles` lets a format handle roles of its own (mini-swe-agent's `exit`) in place.
    """
    extra_roles = extra_roles or {}
    system_parts: list[str] = []
    started = False
    for item in items:
        message = as_dict(item)
        role = as_str(message.get("role")) or "none"
        builder.record(role)
        if role in extra_roles:
            extra_roles[role](message)
            continue
        if role in _SYSTEM_ROLES:
            text = _plain_text(message.get("content"), builder)
            if not started:
                system_parts.append(text)
            else:
                builder.user(
                    [TextContent(text=text)] if text else [],
                    MessageMetadata.agent_only().with_kind("system"),
                )
            continue
        started = True
        if role == "user":
            parts = openai_content_parts(message.get("content"), builder)
            if not parts:
                builder.skip("empty user message")
            builder.user(parts)
        elif role == "assistant":
            _assistant(message, builder)
        elif role == "tool":
            _tool(message, builder)
        else:
            builder.skip(f"message with role {role!r}")
    return "\n\n".join(p for p in system_parts if p) or None


def _plain_text(content: Any, builder: TranscriptBuilder) -> str:
    parts = openai_content_parts(content, builder)
    return "\n".join(p.text for p in parts if isinstance(p, TextContent))


def _assistant(message: dict[str, Any], builder: TranscriptBuilder) -> None:
    parts: list[Content] = []
    reasoning = as_str(message.get("reasoning_content"))
    if reasoning:
        parts.append(ThinkingContent(thinking=reasoning))
    parts.extend(openai_content_parts(message.get("content"), builder))
    calls = message.get("tool_calls")
    if isinstance(calls, str):  # SWE-agent logs a Python repr of the list
        calls = literal_or_json(calls)
    for call in as_list(calls):
        call = as_dict(call)
        function = as_dict(call.get("function"))
        call_id = as_str(call.get("id"))
        if not call_id:
            builder.skip("tool call without an id")
            continue
        arguments, error = decode_arguments(function.get("arguments"))
        parts.append(
            ToolRequest(
                id=call_id,
                name=as_str(function.get("name")) or "",
                arguments=arguments,
                error=error,
            )
        )
    if not parts:
        builder.skip("empty assistant message")
    builder.assistant(parts)


def _tool(message: dict[str, Any], builder: TranscriptBuilder) -> None:
    call_id = as_str(message.get("tool_call_id"))
    if not call_id:
        builder.skip("tool message without tool_call_id")
        return
    parts = openai_content_parts(message.get("content"), builder)
    builder.tool_results([ToolResponse(id=call_id, content=tuple(parts))])
