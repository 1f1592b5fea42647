"""Getting hidden tool output back: nothing masking or summaries hide is out of reach.

Masking only changes what the model is shown, and summaries only flip visibility, so the
session's stored messages always hold every original tool result. `recall` finds one by its
tool call id among all of them, whatever their visibility. The placeholders and summary
headers the model sees name the call id and the tool that brings it back
(`RECALL_TOOL_NAME`), so the model can ask for exactly what it is missing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gosling.conversation import ImageContent, Message, TextContent, ToolRequest, ToolResponse

RECALL_TOOL_NAME = "context__recall"
"""The recall tool as the model sees it: the `recall` tool of the `context` extension
(`agent.tools.recall`)."""

DEFAULT_RECALL_MAX_CHARS = 50_000
"""A recalled output longer than this is cut, so that one recall cannot flood the context."""

ARGUMENTS_PREVIEW_CHARS = 120

FOLDED_KEYWORD = "folded"
"""`context__recall("folded")` lists every call whose output is out of the model's view
(folded, summarized or compacted), with its id."""
LISTED_MAX = 400
"""The newest this many out-of-view calls are listed; older ones are counted."""
ASSISTANT_TEXT_CHARS = 2_000


def recall_hint(tool_call_id: str) -> str:
    """How the model asks for the full output of `tool_call_id`."""
    return f"{RECALL_TOOL_NAME}({json.dumps(tool_call_id)})"


def arguments_preview(arguments: dict[str, Any], limit: int = ARGUMENTS_PREVIEW_CHARS) -> str:
    """The arguments as one line of JSON, cut to `limit` characters."""
    try:
        text = json.dumps(arguments, ensure_ascii=False)
    except (TypeError, ValueError):
        text = "<arguments not JSON>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_call(request: ToolRequest | None, tool_call_id: str) -> str:
    """`developer__shell {"command": "ls"}`, or the bare id when the request is unknown."""
    if request is None:
        return f"tool call {tool_call_id}"
    if not request.arguments:
        return request.name
    return f"{request.name} {arguments_preview(request.arguments)}"


def find_tool_call(
    messages: Sequence[Message], tool_call_id: str
) -> tuple[ToolRequest | None, ToolResponse | None]:
    """The request and the response with this id, from any message, visible or not."""
    request: ToolRequest | None = None
    response: ToolResponse | None = None
    for message in messages:
        for part in message.content:
            if request is None and isinstance(part, ToolRequest) and part.id == tool_call_id:
                request = part
            elif response is None and isinstance(part, ToolResponse) and part.id == tool_call_id:
                response = part
        if request is not None and response is not None:
            break
    return request, response


@dataclass(frozen=True)
class Recalled:
    """What a recall found. `found` is False for an unknown id or a call with no result;
    `text` then explains that to the model."""

    found: bool
    text: str
    images: tuple[ImageContent, ...] = ()
    is_error: bool = False
    """The recalled result was itself an error (the tool failed back then)."""


def recall(
    messages: Sequence[Message],
    tool_call_id: str,
    *,
    max_chars: int | None = DEFAULT_RECALL_MAX_CHARS,
) -> Recalled:
    """The original result of `tool_call_id` from the full session `messages`."""
    tool_call_id = tool_call_id.strip()
    if tool_call_id.lower() == FOLDED_KEYWORD:
        return _listing(messages)
    request, response = find_tool_call(messages, tool_call_id)
    if response is None:
        if request is not None:
            return Recalled(False, f"Tool call {tool_call_id} ({request.name}) has no result.")
        return Recalled(
            False,
            f"No tool call with id {tool_call_id!r} in this session. Pass the id exactly as "
            f"a hidden-output placeholder or tool-call summary shows it, e.g. "
            f"{recall_hint('call_abc123')}.",
        )
    texts = [p.text for p in response.content if isinstance(p, TextContent)]
    images = tuple(p for p in response.content if isinstance(p, ImageContent))
    body = "\n".join(texts) if texts else "(no text output)"
    if max_chars is not None and len(body) > max_chars:
        left_out = len(body) - max_chars
        body = f"{body[:max_chars]}\n[... {left_out:,} more characters not shown]"
    kind = "error output" if response.is_error else "output"
    header = (
        f"Original {kind} of {describe_call(request, tool_call_id)} (tool call {tool_call_id}):"
    )
    if images:
        header += f" [{len(images)} image{'s' if len(images) != 1 else ''} attached]"
    said = _hidden_assistant_text(messages, tool_call_id)
    if said:
        header += f"\nYour message with this call:\n{said}"
    full = json.dumps(request.arguments, ensure_ascii=False, indent=1) if request else "{}"
    if request is not None and request.arguments and (said or len(full) > ARGUMENTS_PREVIEW_CHARS):
        header += f"\nArguments:\n{full}\nOutput:"
    elif said:
        header += "\nOutput:"
    return Recalled(True, f"{header}\n{body}", images, response.is_error)


def _hidden_assistant_text(messages: Sequence[Message], tool_call_id: str) -> str:
    """The text of the assistant message that made the call, when the model no longer sees
    it (the call was folded or summarized), cut to `ASSISTANT_TEXT_CHARS`."""
    for message in messages:
        if message.role == "assistant" and any(r.id == tool_call_id for r in message.tool_requests):
            if message.metadata.agent_visible:
                return ""
            text = message.text.strip()
            if len(text) > ASSISTANT_TEXT_CHARS:
                text = text[: ASSISTANT_TEXT_CHARS - 1] + "…"
            return text
    return ""


def _listing(messages: Sequence[Message]) -> Recalled:
    """Every call whose output the model no longer sees, oldest first, one line each."""
    hidden_results = {
        part.id: part
        for message in messages
        if not message.metadata.agent_visible
        for part in message.content
        if isinstance(part, ToolResponse)
    }
    lines: list[str] = []
    for message in messages:
        for request in message.tool_requests:
            response = hidden_results.get(request.id)
            if response is None:
                continue
            kind = "error, " if response.is_error else ""
            size = len(response.text())
            lines.append(
                f"- {request.id}: {describe_call(request, request.id)} ({kind}{size:,} chars)"
            )
    if not lines:
        return Recalled(True, "No tool call is out of view in this session.")
    header = f"{len(lines)} tool call{'s' if len(lines) != 1 else ''} out of view"
    if len(lines) > LISTED_MAX:
        header += (
            f"; the newest {LISTED_MAX} (the {len(lines) - LISTED_MAX:,} older ones are not listed)"
        )
        lines = lines[-LISTED_MAX:]
    header += f", oldest first. {recall_hint('<id>')} shows one in full:"
    return Recalled(True, "\n".join([header, *lines]))


def recall_tool_output(
    messages: Sequence[Message],
    tool_call_id: str,
    *,
    max_chars: int | None = DEFAULT_RECALL_MAX_CHARS,
) -> str:
    """The original output of a masked or summarized tool call as text, or a clear error text
    when `messages` hold no result for that id."""
    return recall(messages, tool_call_id, max_chars=max_chars).text
