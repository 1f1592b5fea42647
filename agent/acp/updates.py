"""gosling's values as ACP `session/update` payloads: message chunks, tool calls, the plan,
usage, modes and commands. Pure: every function builds SDK models and does no I/O."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message,
)
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    Cost,
    CurrentModeUpdate,
    ImageContentBlock,
    SessionConfigOptionSelect,
    SessionInfoUpdate,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    UnstructuredCommandInput,
    UsageUpdate,
    UserMessageChunk,
)

from gosling.agent.acp.tool_view import FileDiff, ToolView
from gosling.agent.tools.developer import TodoItem
from gosling.conversation import ImageContent, TextContent

SessionUpdate = (
    AgentMessageChunk
    | AgentThoughtChunk
    | UserMessageChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
)
OUTPUT_CHARS = 4_000
"""Most characters of a tool's output shown in the editor (the model gets its own cap)."""

_PLAN_STATUS = {"pending": "pending", "in_progress": "in_progress", "done": "completed"}


def agent_text(text: str) -> AgentMessageChunk:
    return update_agent_message_text(text)


def agent_thought(text: str) -> AgentThoughtChunk:
    return update_agent_thought_text(text)


def user_text(text: str) -> UserMessageChunk:
    return update_user_message(text_block(text))


def user_image(image: ImageContent) -> UserMessageChunk:
    return update_user_message(
        ImageContentBlock(type="image", data=image.data, mime_type=image.mime_type)
    )


def tool_started(
    call_id: str,
    view: ToolView,
    arguments: dict[str, Any],
    *,
    status: str,
    diff: FileDiff | None = None,
) -> ToolCallStart:
    """The `tool_call` that opens a call: `pending` while it waits for approval,
    `in_progress` when it runs at once."""
    return start_tool_call(
        call_id,
        view.title,
        kind=view.kind,
        status="in_progress" if status == "in_progress" else "pending",
        content=[diff_content(diff)] if diff is not None else None,
        locations=_locations(view),
        raw_input=arguments,
    )


def tool_running(call_id: str) -> ToolCallProgress:
    return update_tool_call(call_id, status="in_progress")


def tool_finished(
    call_id: str, output: str, is_error: bool, *, diff: FileDiff | None = None
) -> ToolCallProgress:
    """The last update of a call: its status, the diff it made (edits that succeeded) and
    the head of its output."""
    content: list[Any] = []
    if diff is not None and not is_error:
        content.append(diff_content(diff))
    shown = output if len(output) <= OUTPUT_CHARS else output[:OUTPUT_CHARS] + "…"
    if shown:
        content.append(tool_content(text_block(shown)))
    return update_tool_call(
        call_id,
        status="failed" if is_error else "completed",
        content=content,
        raw_output={"output": shown, "is_error": is_error},
    )


def replayed_call(
    call_id: str,
    view: ToolView,
    arguments: dict[str, Any],
    output: str | None,
    is_error: bool,
) -> ToolCallStart:
    """A finished call of a stored session, in one update."""
    content = None
    if output:
        shown = output if len(output) <= OUTPUT_CHARS else output[:OUTPUT_CHARS] + "…"
        content = [tool_content(text_block(shown))]
    status: ToolCallStatus = "failed" if is_error or output is None else "completed"
    return start_tool_call(
        call_id,
        view.title,
        kind=view.kind,
        status=status,
        content=content,
        locations=_locations(view),
        raw_input=arguments,
    )


def plan(items: Sequence[TodoItem]) -> AgentPlanUpdate:
    return update_plan(
        plan_entry(item.content, status=_PLAN_STATUS[item.status])  # type: ignore[arg-type]
        for item in items
    )


def usage(used: int, size: int, cost_usd: float | None) -> UsageUpdate:
    """The context meter: tokens in the context now, the window, and the session's cost so
    far where every call's price is known."""
    cost = Cost(amount=round(cost_usd, 6), currency="USD") if cost_usd is not None else None
    return UsageUpdate(session_update="usage_update", used=max(used, 0), size=size, cost=cost)


def commands(entries: Iterable[tuple[str, str, str | None]]) -> AvailableCommandsUpdate:
    """`(name, description, input hint or None)` as available commands."""
    return AvailableCommandsUpdate(
        session_update="available_commands_update",
        available_commands=[
            AvailableCommand(
                name=name,
                description=description,
                input=AvailableCommandInput(UnstructuredCommandInput(hint=hint)) if hint else None,
            )
            for name, description, hint in entries
        ],
    )


def current_mode(mode: str) -> CurrentModeUpdate:
    return CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode)


def config_options(options: Sequence[SessionConfigOptionSelect]) -> ConfigOptionUpdate:
    return ConfigOptionUpdate(session_update="config_option_update", config_options=list(options))


def session_info(title: str, updated: float) -> SessionInfoUpdate:
    return SessionInfoUpdate(
        session_update="session_info_update", title=title, updated_at=iso_time(updated)
    )


def iso_time(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat().replace("+00:00", "Z")


def result_text(parts: Iterable[object]) -> str:
    """The text of a tool result's parts (images are named, not shown)."""
    texts = []
    for part in parts:
        if isinstance(part, TextContent):
            texts.append(part.text)
        elif isinstance(part, ImageContent):
            texts.append(f"[image {part.mime_type}]")
    return "\n".join(texts)


def diff_content(diff: FileDiff) -> Any:
    return tool_diff_content(diff.path, diff.new_text, diff.old_text)


def text_content(text: str) -> Any:
    return tool_content(text_block(text))


def _locations(view: ToolView) -> list[ToolCallLocation] | None:
    if not view.locations:
        return None
    return [ToolCallLocation(path=loc.path, line=loc.line) for loc in view.locations]
