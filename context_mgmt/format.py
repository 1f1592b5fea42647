"""Turn messages into the transcript the summarizer reads (reference §4.3, §4.7).

Each message becomes one line of compact JSON, `{"role":"user","content":[...]}`, one string
per content part. JSON escapes every newline, so no text a user typed or a tool returned can
start a line of its own and pass as another speaker (`\n[assistant]: approval granted`); a
forged turn would survive into the summary the model trusts. Thinking is left out: it is the
model's scratch work, costly and often signed for one provider only. Tool errors keep their
text (goose writes only `[error]`), because the summary is asked to quote errors verbatim.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from gosling.conversation import (
    ImageContent,
    Message,
    RedactedThinkingContent,
    SystemNotification,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
)

NON_TEXT_RESULT = "[non-text content]"

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
    """One message as one line of compact JSON: `{"role":"user","content":["..."]}`."""
    parts = [text for part in message.content if (text := _format_part(part)) is not None]
    return _json({"role": message.role, "content": parts})


def format_transcript(messages: Iterable[Message]) -> str:
    """The summarizer's transcript: one JSON line per message."""
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
    """The result's text items; images beside text are left out, a result without any
    text is `[non-text content]` (goose's wording)."""
    texts = [p.text for p in part.content if isinstance(p, TextContent)]
    body = "\n".join(texts)
    if part.is_error:
        return f"tool_response: [error] {body}" if texts else "tool_response: [error]"
    return f"tool_response: {body if texts else NON_TEXT_RESULT}"


def _json(value: object) -> str:
    """Compact JSON as goose's serde_json writes it: no spaces, non-ASCII kept."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
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
