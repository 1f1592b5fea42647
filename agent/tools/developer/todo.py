"""The session's task list: `todo_write` replaces it, `todo_read` shows it.

The list lives in the session's extension data under `TODO_KEY`, so it survives restarts
with the session; `render_todo_block` formats it for the per-turn context (MOIM), which
keeps the plan in front of the model even after compaction.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gosling.agent.tools.base import ExtensionData, Tool, ToolContext, ToolError, tool

TODO_KEY = "developer.todo"
MAX_ITEMS = 100

TodoStatus = Literal["pending", "in_progress", "done"]
_MARKS: dict[str, str] = {"pending": "[ ]", "in_progress": "[~]", "done": "[x]"}


class TodoItem(BaseModel):
    """One task of the list."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str = Field(min_length=1, description="What to do, in one line.")
    status: TodoStatus = Field("pending", description="pending, in_progress or done.")


def read_todo(data: ExtensionData) -> list[TodoItem]:
    """The stored list; an unreadable stored value counts as empty rather than failing a turn."""
    raw: Any = data.get(TODO_KEY)
    if not isinstance(raw, list):
        return []
    try:
        return [TodoItem.model_validate(item) for item in raw]
    except ValidationError:
        return []


def write_todo(data: ExtensionData, items: list[TodoItem]) -> None:
    data.set(TODO_KEY, [item.model_dump() for item in items])


def render_todo_block(items: list[TodoItem]) -> str:
    """The list as the per-turn context shows it; empty string when there are no tasks."""
    if not items:
        return ""
    done = sum(item.status == "done" for item in items)
    lines = [f"Task list ({done}/{len(items)} done):"]
    lines += [f"- {_MARKS[item.status]} {item.content}" for item in items]
    return "\n".join(lines)


def todo_tools() -> list[Tool]:
    # Read-only in the MCP sense: it changes nothing outside gosling's own session notes,
    # so smart_approve does not stop to ask before the model updates its plan.
    @tool(read_only=True)
    async def todo_write(ctx: ToolContext, items: list[TodoItem]) -> str:
        """Replace the task list of this session. Use it to plan multi-step work and to mark
        progress: keep one task in_progress at a time and mark tasks done as soon as they are.

        Args:
            items: The complete new list, in order. Each item has content and status
                (pending, in_progress or done).
        """
        if len(items) > MAX_ITEMS:
            raise ToolError(f"The task list may have at most {MAX_ITEMS} items; merge some tasks.")
        write_todo(ctx.extension_data, items)
        rendered = render_todo_block(items) or "The task list is now empty."
        active = sum(item.status == "in_progress" for item in items)
        if active > 1:
            rendered += (
                f"\nNote: {active} tasks are in_progress; finish one before starting the next."
            )
        return rendered

    @tool(read_only=True)
    async def todo_read(ctx: ToolContext) -> str:
        """Show the task list of this session."""
        return render_todo_block(read_todo(ctx.extension_data)) or "The task list is empty."

    return [todo_write, todo_read]
