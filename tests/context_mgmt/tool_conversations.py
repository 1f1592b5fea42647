"""Builders for conversations full of tool calls, shared by the tool-pair, masking and recall
tests."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from gosling.context_mgmt.masking import MaskingPresenter
from gosling.context_mgmt.tool_pairs import TOOL_SUMMARY_KIND, apply_tool_pair_summaries
from gosling.conversation import (
    Message,
    MessageMetadata,
    TextContent,
    ToolRequest,
    ToolResponse,
    fix_conversation,
)


def call(tool_id: str, name: str = "developer__shell", **arguments: Any) -> ToolRequest:
    return ToolRequest(id=tool_id, name=name, arguments=arguments or {"command": f"cmd {tool_id}"})


def output(tool_id: str, text: str, *, is_error: bool = False) -> ToolResponse:
    return ToolResponse(id=tool_id, content=(TextContent(text=text),), is_error=is_error)


def asks(*calls: ToolRequest, text: str | None = None) -> Message:
    return Message.assistant(text, *calls)


def answers(*responses: ToolResponse) -> Message:
    return Message.user(None, *responses)


def big_output(tool_id: str, lines: int = 40) -> str:
    return "\n".join(f"{tool_id} line {i}: " + "x" * 30 for i in range(lines))


def tool_loop(count: int, *, start: int = 0, lines: int = 40) -> list[Message]:
    """`count` sequential tool calls `call_<n>`, each answered with a sizeable output."""
    messages: list[Message] = []
    for n in range(start, start + count):
        tool_id = f"call_{n}"
        messages.append(asks(call(tool_id)))
        messages.append(answers(output(tool_id, big_output(tool_id, lines))))
    return messages


def session(calls: int, *, lines: int = 40) -> list[Message]:
    """A user request followed by `calls` tool calls; it ends with tool results (mid-turn)."""
    return [Message.user("Fix the failing tests."), *tool_loop(calls, lines=lines)]


def note_for(tool_id: str, text: str | None = None) -> Message:
    """A stand-in for a `summarize_tool_pair` result."""
    meta = MessageMetadata.agent_only().with_kind(TOOL_SUMMARY_KIND)
    body = text or f"summary of {tool_id}"
    return Message(role="user", content=(TextContent(text=body),), metadata=meta)


def notes_for(ids: Sequence[str]) -> dict[str, Message]:
    return {tool_id: note_for(tool_id) for tool_id in ids}


def visible(messages: Sequence[Message]) -> list[Message]:
    return [m for m in messages if m.metadata.agent_visible]


def mark_masked(messages: Sequence[Message], ids: Iterable[str]) -> list[Message]:
    """`messages` with the `masked` flag the pipeline sets on the messages named by `ids`."""
    wanted = set(ids)
    return [m.with_metadata(m.metadata.with_masked()) if m.id in wanted else m for m in messages]


def shown(messages: Sequence[Message]) -> list[Message]:
    """The agent-visible messages as the model is shown them (the loop's presenter)."""
    present = MaskingPresenter()
    return [present(m) for m in visible(messages)]


def view_issues(messages: Sequence[Message]) -> list[str]:
    """What `fix_conversation` would repair in the request built from `messages`."""
    return fix_conversation(shown(messages))[1]


def visible_tool_ids(messages: Sequence[Message]) -> list[str]:
    return [r.id for m in visible(messages) for r in m.tool_requests]


def applied(
    messages: Sequence[Message], summaries: dict[str, Message]
) -> tuple[list[Message], list[str]]:
    """`apply_tool_pair_summaries` as (the new conversation, the ids flipped invisible)."""
    application = apply_tool_pair_summaries(messages, summaries)
    return list(application.messages), list(application.flipped_ids)
