"""A session as Markdown, showing what the user saw.

Only user-visible messages appear; agent-only summaries and hints stay out, thinking is left
out, tool calls are one line each and long tool output is cut short.
"""

from __future__ import annotations

import json
import re
import time

from gosling.conversation import (
    ImageContent,
    Message,
    SystemNotification,
    TextContent,
    ToolRequest,
    ToolResponse,
)
from gosling.sessions.records import SessionSnapshot

_ARGUMENT_CHARS = 200
_RESULT_LINES = 12
_RESULT_CHARS = 1500
_HEADINGS = {"user": "User", "assistant": "Assistant", "tool": "Tool results"}


def _fence(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}\n{text}\n{ticks}"


def _when(timestamp: float | None) -> str:
    if timestamp is None:
        return "unknown"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tool_call(part: ToolRequest) -> str:
    arguments = _shorten(json.dumps(part.arguments, ensure_ascii=False), _ARGUMENT_CHARS)
    line = f"**→ `{part.name}`** `{arguments}`"
    return f"{line} (malformed: {part.error})" if part.error else line


def _tool_result(part: ToolResponse) -> str:
    pieces: list[str] = []
    for item in part.content:
        if isinstance(item, TextContent):
            pieces.append(item.text)
        else:
            pieces.append(f"[image: {item.mime_type}]")
    text = "\n".join(pieces)
    lines = text.splitlines()
    shown = "\n".join(lines[:_RESULT_LINES])
    shown = _shorten(shown, _RESULT_CHARS)
    hidden = len(lines) - _RESULT_LINES
    label = "**← error**" if part.is_error else "**← result**"
    body = _fence(shown) if shown else "_(empty)_"
    more = f"\n_… {hidden} more lines_" if hidden > 0 else ""
    return f"{label}\n{body}{more}"


def _message(message: Message) -> str:
    blocks: list[str] = []
    for part in message.content:
        if isinstance(part, TextContent):
            blocks.append(part.text)
        elif isinstance(part, ImageContent):
            blocks.append(f"[image: {part.mime_type}]")
        elif isinstance(part, ToolRequest):
            blocks.append(_tool_call(part))
        elif isinstance(part, ToolResponse):
            blocks.append(_tool_result(part))
        elif isinstance(part, SystemNotification):
            blocks.append(f"> _{part.msg}_")
    return "\n\n".join(blocks)


def render_markdown(snapshot: SessionSnapshot) -> str:
    title = snapshot.name or f"Session {snapshot.id}"
    model = "/".join(x for x in (snapshot.provider, snapshot.model) if x) or "unknown"
    out = [
        f"# {title}",
        "",
        f"- id: `{snapshot.id}`",
        f"- working dir: `{snapshot.working_dir}`",
        f"- model: {model}",
        f"- created: {_when(snapshot.created_at)}, updated: {_when(snapshot.updated_at)}",
    ]
    if snapshot.tokens is not None:
        t = snapshot.tokens
        out.append(
            f"- tokens: {t.input_tokens} in, {t.output_tokens} out over {t.model_calls} calls"
        )
    for message in snapshot.messages:
        if not message.metadata.user_visible:
            continue
        body = _message(message)
        if body:
            out.extend(["", f"## {_HEADINGS[message.effective_role]}", "", body])
    return "\n".join(out) + "\n"
