"""A stored session as the updates `session/load` replays: what the user saw, in order.

Messages only the model sees (summaries, hints, the interrupted-turn note) are left out;
messages only the user sees (compacted originals, slash commands and their outcome) are in.
Each tool call is one `tool_call` with its final status and output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from gosling.agent.acp import updates
from gosling.agent.acp.tool_view import describe_call
from gosling.agent.tools.base import ToolAnnotations
from gosling.conversation import (
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
)


def replay(
    messages: Sequence[Message],
    working_dir: Path,
    annotations: Callable[[str], ToolAnnotations | None] = lambda name: None,
) -> Iterator[updates.SessionUpdate]:
    responses = {r.id: r for m in messages for r in m.tool_responses}
    for message in messages:
        if not message.metadata.user_visible:
            continue
        for part in message.content:
            if message.role == "user":
                if isinstance(part, TextContent) and part.text:
                    yield updates.user_text(part.text)
                elif isinstance(part, ImageContent):
                    yield updates.user_image(part)
            elif isinstance(part, TextContent) and part.text:
                yield updates.agent_text(part.text)
            elif isinstance(part, ThinkingContent) and part.thinking:
                yield updates.agent_thought(part.thinking)
            elif isinstance(part, ToolRequest):
                yield _call(part, responses.get(part.id), working_dir, annotations)


def _call(
    request: ToolRequest,
    response: ToolResponse | None,
    working_dir: Path,
    annotations: Callable[[str], ToolAnnotations | None],
) -> updates.SessionUpdate:
    view = describe_call(request.name, request.arguments, working_dir, annotations(request.name))
    output = updates.result_text(response.content) if response is not None else None
    is_error = response.is_error if response is not None else True
    return updates.replayed_call(request.id, view, dict(request.arguments), output, is_error)
