"""How a tool call looks in the editor: its title, its ACP kind, the files it touches and,
for edits, the change as a diff the editor can show before and after it runs.

Pure except `edit_preview`, which reads the file an edit is about to change (inside the
working dir only, and only up to `PREVIEW_FILE_BYTES`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gosling.agent.permissions import PATH_ARGUMENTS, is_shell_tool
from gosling.agent.tools.base import ToolAnnotations

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
PREVIEW_FILE_BYTES = 1_000_000
"""Files larger than this are shown as the edited snippet, not as a whole-file diff."""
TITLE_CHARS = 120

_DEVELOPER: dict[str, tuple[ToolKind, str]] = {
    "view": ("read", "Read {path}"),
    "write": ("edit", "Write {path}"),
    "edit": ("edit", "Edit {path}"),
    "undo_edit": ("edit", "Undo the last change to {path}"),
    "tree": ("read", "List {path}"),
    "todo_write": ("think", "Update the plan"),
    "todo_read": ("think", "Read the plan"),
}
_BY_WORD: tuple[tuple[re.Pattern[str], ToolKind], ...] = (
    (re.compile(r"fetch|http|url|web|browse|download"), "fetch"),
    (re.compile(r"search|grep|find|query|lookup|recall"), "search"),
    (re.compile(r"delete|remove|rm\b|unlink"), "delete"),
    (re.compile(r"move|rename|mv\b"), "move"),
    (re.compile(r"exec|run|shell|command|bash"), "execute"),
    (re.compile(r"write|edit|create|update|patch|replace|commit|add"), "edit"),
    (re.compile(r"read|get|list|show|view|status|log|diff|cat"), "read"),
    (re.compile(r"think|plan|todo"), "think"),
)


@dataclass(frozen=True)
class Location:
    path: str
    """Absolute."""
    line: int | None = None


@dataclass(frozen=True)
class FileDiff:
    path: str
    """Absolute."""
    old_text: str | None
    """None: the file does not exist yet."""
    new_text: str


@dataclass(frozen=True)
class ToolView:
    title: str
    kind: ToolKind
    locations: tuple[Location, ...] = ()


def describe_call(
    name: str,
    arguments: Mapping[str, Any],
    working_dir: Path,
    annotations: ToolAnnotations | None = None,
) -> ToolView:
    """Title, kind and locations of one call, from its name and arguments alone."""
    extension, _, tool = name.partition("__")
    path = _path_argument(arguments)
    locations = _locations(path, arguments, working_dir)
    if is_shell_tool(name):
        command = arguments.get("command")
        title = f"Run `{_one_line(command)}`" if isinstance(command, str) else "Run a command"
        return ToolView(_cut(title), "execute", (Location(str(working_dir)),))
    if extension == "developer" and tool in _DEVELOPER:
        kind, template = _DEVELOPER[tool]
        shown = path if path is not None else "."
        return ToolView(_cut(template.format(path=shown)), kind, locations)
    if name == "context__recall":
        query = arguments.get("query")
        title = f"Recall “{_one_line(query)}”" if isinstance(query, str) else "Recall"
        return ToolView(_cut(title), "search")
    title = f"{tool or name} ({extension})" if tool else name
    if path is not None:
        title += f": {path}"
    return ToolView(_cut(title), _kind_by_name(tool or name, annotations), locations)


def edit_preview(name: str, arguments: Mapping[str, Any], working_dir: Path) -> FileDiff | None:
    """The change a `write` or `edit` call is about to make, as a whole-file diff where the
    file is small enough to read (else the replaced snippet); None for other calls."""
    if name not in ("developer__write", "developer__edit"):
        return None
    path = _path_argument(arguments)
    target = _inside(path, working_dir) if path is not None else None
    if target is None:
        return None
    current = _read_small(target)
    if name == "developer__write":
        content = arguments.get("content")
        if not isinstance(content, str):
            return None
        return FileDiff(str(target), current, content)
    old, new = arguments.get("old"), arguments.get("new")
    if not isinstance(old, str) or not isinstance(new, str) or not old:
        return None
    if current is not None and current.count(old) == 1:
        return FileDiff(str(target), current, current.replace(old, new, 1))
    return FileDiff(str(target), old, new)


def _path_argument(arguments: Mapping[str, Any]) -> str | None:
    value = next((arguments[k] for k in PATH_ARGUMENTS if isinstance(arguments.get(k), str)), None)
    return value if isinstance(value, str) and value.strip() else None


def _locations(
    path: str | None, arguments: Mapping[str, Any], working_dir: Path
) -> tuple[Location, ...]:
    if path is None:
        return ()
    candidate = Path(path).expanduser()
    absolute = candidate if candidate.is_absolute() else working_dir / candidate
    line = None
    view_range = arguments.get("view_range")
    if isinstance(view_range, list) and view_range and isinstance(view_range[0], int):
        line = view_range[0] if view_range[0] > 0 else None
    return (Location(str(absolute), line),)


def _inside(path: str, working_dir: Path) -> Path | None:
    root = working_dir.resolve()
    candidate = Path(path).expanduser()
    resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
    return resolved if resolved.is_relative_to(root) else None


def _read_small(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > PREVIEW_FILE_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _kind_by_name(tool: str, annotations: ToolAnnotations | None) -> ToolKind:
    words = tool.lower()
    for pattern, kind in _BY_WORD:
        if pattern.search(words):
            return kind
    if annotations is not None and annotations.read_only:
        return "read"
    return "other"


def _one_line(value: object) -> str:
    text = " ".join(str(value).split())
    return text


def _cut(text: str) -> str:
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"
