"""Turn messages into the plain transcript the summarizer reads (reference §4.3, §4.7).

Each message becomes `[role]: ...` with one line per content part. Thinking is left out: it
is the model's scratch work, costly and often signed for one provider only. Tool errors keep
their text, because the summary is asked to quote errors verbatim.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from conversation import (
    ImageContent,
    Message,
    RedactedThinkingContent,
    SystemNotification,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
)

EMPTY_MESSAGE = "<empty message>"

READ_TOOLS = frozenset(
    {"read", "read_file", "view", "view_file", "file_read", "developer__read", "open_file"}
)
WRITE_TOOLS = frozenset(
    {
        "write",
        "edit",
        "write_file",
        "edit_file",
        "create_file",
        "file_write",
        "file_edit",
        "str_replace",
        "str_replace_editor",
        "developer__write",
        "developer__edit",
    }
)
_EDITOR_TOOLS = frozenset({"text_editor", "str_replace_based_edit_tool"})
_EDITOR_READ_COMMANDS = frozenset({"view"})
_PATH_KEYS = ("path", "file_path")


def format_message_for_compacting(message: Message) -> str:
    """One message as transcript text: `[user]: ...` or `[assistant]: ...`."""
    parts = [text for part in message.content if (text := _format_part(part)) is not None]
    body = "\n".join(parts) if parts else EMPTY_MESSAGE
    return f"[{message.role}]: {body}"


def format_transcript(messages: Iterable[Message]) -> str:
    return "\n".join(format_message_for_compacting(m) for m in messages)


def _format_part(part: object) -> str | None:
    if isinstance(part, TextContent):
        return part.text
    if isinstance(part, ImageContent):
        return f"[image: {part.mime_type}]"
    if isinstance(part, ToolRequest):
        if part.error is not None:
            return f"tool_request({part.name}): [invalid call] {part.error}"
        return f"tool_request({part.name}): {_json(part.arguments)}"
    if isinstance(part, ToolResponse):
        return _format_tool_response(part)
    if isinstance(part, SystemNotification):
        return f"system_notification: {part.msg}"
    if isinstance(part, ThinkingContent | RedactedThinkingContent):
        return None
    return f"[{type(part).__name__}]"


def _format_tool_response(part: ToolResponse) -> str:
    items = [
        p.text if isinstance(p, TextContent) else f"[image: {p.mime_type}]" for p in part.content
    ]
    body = "\n".join(items) if items else "[no content]"
    return f"tool_response: [error] {body}" if part.is_error else f"tool_response: {body}"


def _json(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return "<<invalid json>>"


def extract_file_history(messages: Sequence[Message]) -> tuple[list[str], list[str]]:
    """Paths the agent read and the paths it modified, from its tool requests.

    A tool matches by its full name or the part after the last `__` (extension prefixes).
    A path that was both read and written counts as modified only. Order is first-seen.
    """
    reads: dict[str, None] = {}
    writes: dict[str, None] = {}
    for message in messages:
        for request in message.tool_requests:
            path = _path_argument(request.arguments)
            if path is None:
                continue
            kind = _file_access(request)
            if kind == "write":
                writes[path] = None
            elif kind == "read":
                reads[path] = None
    return [p for p in reads if p not in writes], list(writes)


def _path_argument(arguments: dict[str, object]) -> str | None:
    for key in _PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _file_access(request: ToolRequest) -> str | None:
    short = request.name.rsplit("__", 1)[-1]
    names = {request.name, short}
    if names & WRITE_TOOLS:
        return "write"
    if names & READ_TOOLS:
        return "read"
    if names & _EDITOR_TOOLS:
        command = request.arguments.get("command")
        return "read" if command in _EDITOR_READ_COMMANDS else "write"
    return None
