"""gosling's tools as Claude Code's hook scripts know them.

A script written for Claude Code matches `Bash` and reads `tool_input.command`, or matches
`Edit|Write` and reads `tool_input.file_path`. So the developer tools carry Claude Code's
names, the payload gives `tool_name` and `tool_input` in Claude Code's shape (absolute
paths), and gosling's own name and arguments ride along as `gosling_tool_name` and
`gosling_tool_input`. A matcher may name either; MCP tools also match as
`mcp__<extension>__<tool>`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

CLAUDE_CODE_NAMES = {
    "developer__shell": "Bash",
    "developer__view": "Read",
    "developer__write": "Write",
    "developer__edit": "Edit",
    "developer__todo_write": "TodoWrite",
}
_OWN_PREFIXES = ("developer__", "context__")
_EXACT = re.compile(r"[\w|]*")


def names_of(tool: str) -> tuple[str, ...]:
    """Every name a matcher may use for `tool`."""
    alias = CLAUDE_CODE_NAMES.get(tool)
    if alias is not None:
        return tool, alias
    if "__" in tool and not tool.startswith(_OWN_PREFIXES):
        return tool, f"mcp__{tool}"
    return (tool,)


def matches(matcher: str, values: tuple[str, ...]) -> bool:
    """Claude Code's matcher rule: empty or `*` matches everything; letters, digits, `_` and
    `|` are exact names; anything else is a regex that must match a whole name."""
    if matcher in ("", "*"):
        return True
    if _EXACT.fullmatch(matcher):
        wanted = set(matcher.split("|"))
        return any(value in wanted for value in values)
    pattern = _compiled(matcher)
    return any(pattern.fullmatch(value) for value in values)


@lru_cache(maxsize=256)
def _compiled(matcher: str) -> re.Pattern[str]:
    return re.compile(matcher)


def tool_fields(tool: str, arguments: Mapping[str, Any], working_dir: Path) -> dict[str, Any]:
    """`tool_name` and `tool_input` as Claude Code would send them, plus gosling's own."""
    alias = CLAUDE_CODE_NAMES.get(tool)
    args = dict(arguments)
    fields: dict[str, Any] = {"tool_name": alias or tool, "tool_input": args}
    if alias is not None:
        fields["tool_input"] = _claude_input(alias, args, working_dir)
    fields["gosling_tool_name"] = tool
    fields["gosling_tool_input"] = args
    return fields


def _claude_input(alias: str, args: dict[str, Any], working_dir: Path) -> dict[str, Any]:
    path = args.get("path")
    file_path = str(working_dir / path) if isinstance(path, str) else path
    if alias == "Bash":
        shaped: dict[str, Any] = {"command": args.get("command", "")}
        if isinstance(args.get("timeout_secs"), int | float):
            shaped["timeout"] = int(args["timeout_secs"] * 1000)
        return shaped
    if alias == "Read":
        shaped = {"file_path": file_path}
        view = args.get("view_range")
        if isinstance(view, list) and len(view) == 2 and all(isinstance(v, int) for v in view):
            shaped["offset"] = view[0]
            if view[1] >= view[0]:
                shaped["limit"] = view[1] - view[0] + 1
        return shaped
    if alias == "Write":
        return {"file_path": file_path, "content": args.get("content", "")}
    if alias == "Edit":
        return {
            "file_path": file_path,
            "old_string": args.get("old", ""),
            "new_string": args.get("new", ""),
            "replace_all": False,
        }
    return {"todos": args.get("items", [])}


def arguments_from_hook(
    tool: str, updated: Mapping[str, Any], arguments: Mapping[str, Any], working_dir: Path
) -> dict[str, Any]:
    """gosling's arguments for `tool` after a PreToolUse hook's `updatedInput`, which is in
    the shape the hook was sent (`tool_input`): Claude Code's fields for the developer
    tools (absolute `file_path`, `timeout` in ms), gosling's own for every other tool.
    Fields the hook left out keep the model's values."""
    alias = CLAUDE_CODE_NAMES.get(tool)
    args = dict(arguments)
    if alias is None:
        args.update(updated)
        return args
    file_path = updated.get("file_path")
    if isinstance(file_path, str):
        path = Path(file_path)
        args["path"] = (
            str(path.relative_to(working_dir)) if path.is_relative_to(working_dir) else file_path
        )
    if alias == "Bash":
        if "command" in updated:
            args["command"] = updated["command"]
        if isinstance(updated.get("timeout"), int | float):
            args["timeout_secs"] = updated["timeout"] / 1000
    elif alias == "Write" and "content" in updated:
        args["content"] = updated["content"]
    elif alias == "Edit":
        for theirs, ours in (("old_string", "old"), ("new_string", "new")):
            if theirs in updated:
                args[ours] = updated[theirs]
    elif alias == "Read" and isinstance(updated.get("offset"), int):
        start = updated["offset"]
        limit = updated.get("limit")
        args["view_range"] = [start, start + limit - 1 if isinstance(limit, int) else -1]
    elif alias == "TodoWrite" and "todos" in updated:
        args["items"] = updated["todos"]
    return args


def tool_response(
    tool: str, arguments: Mapping[str, Any], output: str, is_error: bool, working_dir: Path
) -> dict[str, Any]:
    """PostToolUse's `tool_response`: Claude Code's fields for its tools, always `output`
    and `is_error`."""
    alias = CLAUDE_CODE_NAMES.get(tool)
    response: dict[str, Any] = {"output": output, "is_error": is_error}
    if alias == "Bash":
        response.update(stdout=output, stderr="", interrupted=False, isImage=False)
    elif alias in ("Read", "Write", "Edit"):
        path = arguments.get("path")
        if isinstance(path, str):
            response["filePath"] = str(working_dir / path)
        response["success"] = not is_error
    return response
