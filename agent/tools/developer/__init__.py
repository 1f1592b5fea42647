"""The built-in `developer` extension: shell, file tools, tree and the session's task list."""

from __future__ import annotations

from pathlib import Path

from gosling.agent.tools.developer.files import file_tools
from gosling.agent.tools.developer.process import shell_environment
from gosling.agent.tools.developer.result_caps import ResultCaps
from gosling.agent.tools.developer.shell import shell_tool
from gosling.agent.tools.developer.todo import (
    TODO_KEY,
    TodoItem,
    read_todo,
    render_todo_block,
    todo_tools,
    write_todo,
)
from gosling.agent.tools.developer.tree import tree_tool
from gosling.agent.tools.developer.workspace import DeveloperSettings, DeveloperState
from gosling.agent.tools.manager import BuiltinExtension

DEVELOPER = "developer"

INSTRUCTIONS = """\
Paths are relative to the working directory; the file tools refuse paths outside it.
Prefer view/edit/write over shell commands for reading and changing files: edit needs the
exact current text (view the file first) and undo_edit reverts the last change of a file.
Keep a task list with todo_write for work of more than a few steps."""


def developer_extension(
    settings: DeveloperSettings | None = None, *, spill_files: set[Path] | None = None
) -> BuiltinExtension:
    """A fresh developer extension (one per session: it remembers file versions for undo).

    `spill_files` is shared with the `ResultCaps` of the session, so `view` can read what
    the cap on tool results saved.
    """
    state = DeveloperState(settings or DeveloperSettings())
    if spill_files is not None:
        state.spill_files = spill_files
    tools = [shell_tool(state), *file_tools(state), tree_tool(state), *todo_tools()]
    return BuiltinExtension(DEVELOPER, tools, INSTRUCTIONS)


__all__ = [
    "DEVELOPER",
    "TODO_KEY",
    "DeveloperSettings",
    "DeveloperState",
    "ResultCaps",
    "TodoItem",
    "developer_extension",
    "read_todo",
    "render_todo_block",
    "shell_environment",
    "write_todo",
]
