"""What an edit or a write would change, shown before the approval question: a unified diff
(removed lines red, added green) for an edit or an overwrite, the head of the content for a
new file, as Claude Code and Codex show them. Display only: the tool itself does the change
and its checks. File text is untrusted, so control characters are shown as `^X`, never sent
to the terminal."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_LINES = 40
"""Diff or head lines shown; the rest is counted."""
MAX_FILE_BYTES = 2_000_000
"""Bigger files are not read for a preview (the tool still works on them)."""


@dataclass(frozen=True)
class PreviewLine:
    text: str
    style: str = ""


def _safe(text: str) -> str:
    return "".join(
        ch
        if ch == "\t" or (ord(ch) >= 32 and not 0x7F <= ord(ch) <= 0x9F)
        else f"^{chr(ord(ch) ^ 0x40) if ord(ch) < 128 else '?'}"
        for ch in text
    )


def _read(path: Path) -> str | None:
    """The file's text; None when it does not exist. Raises ValueError when unreadable."""
    if not path.exists():
        return None
    if not path.is_file():
        raise ValueError(f"{path.name} is not a regular file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"{path.name} is over {MAX_FILE_BYTES:,} bytes; no preview")
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path.name} is not UTF-8 text; no preview") from None


def preview(
    tool_name: str, arguments: Mapping[str, Any], working_dir: Path
) -> list[PreviewLine] | None:
    """The lines to show for an edit or write call, or None for other tools."""
    kind = tool_name.rsplit("__", 1)[-1]
    if not tool_name.startswith("developer__") or kind not in ("edit", "write"):
        return None
    path_arg = arguments.get("path")
    if not isinstance(path_arg, str):
        return None
    path = (working_dir / path_arg).expanduser()
    try:
        before = _read(path)
    except (OSError, ValueError) as exc:
        return [PreviewLine(f"  ({exc})", "dim")]
    if kind == "write":
        content = arguments.get("content")
        if not isinstance(content, str):
            return None
        if before is None:
            return _new_file(path_arg, content)
        return _diff(path_arg, before, content)
    old, new = arguments.get("old"), arguments.get("new")
    if not isinstance(old, str) or not isinstance(new, str):
        return None
    if before is None:
        return [PreviewLine(f"  ({path_arg} does not exist; the edit will fail)", "dim")]
    count = before.count(old) if old else 0
    if count == 0 and "\r\n" in before:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = before.count(old)
    if count != 1:
        said = "is not in the file" if count == 0 else f"occurs {count} times"
        return [PreviewLine(f"  (the text to replace {said}; the edit will fail)", "dim")]
    return _diff(path_arg, before, before.replace(old, new, 1))


def _diff(shown: str, before: str, after: str) -> list[PreviewLine]:
    raw = list(
        difflib.unified_diff(
            before.splitlines(),
            after.splitlines(),
            f"a/{shown}",
            f"b/{shown}",
            n=3,
            lineterm="",
        )
    )
    if not raw:
        return [PreviewLine(f"  ({shown}: no change)", "dim")]
    lines = []
    for text in raw[:MAX_LINES]:
        if text.startswith(("---", "+++")):
            style = "bold"
        elif text.startswith("@@"):
            style = "cyan"
        elif text.startswith("+"):
            style = "green"
        elif text.startswith("-"):
            style = "red"
        else:
            style = ""
        lines.append(PreviewLine(_safe(text), style))
    if len(raw) > MAX_LINES:
        lines.append(PreviewLine(f"… {len(raw) - MAX_LINES} more diff lines", "dim"))
    return lines


def _new_file(shown: str, content: str) -> list[PreviewLine]:
    body = content.splitlines()
    lines = [PreviewLine(f"new file {shown} ({len(body)} lines)", "bold")]
    lines += [PreviewLine("+" + _safe(text), "green") for text in body[:MAX_LINES]]
    if len(body) > MAX_LINES:
        lines.append(PreviewLine(f"… {len(body) - MAX_LINES} more lines", "dim"))
    return lines
