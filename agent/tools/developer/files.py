"""File tools: view, write, edit (unique exact match) and undo_edit."""

from __future__ import annotations

import base64
from pathlib import Path

from agent.tools.base import Tool, ToolContext, ToolError, ToolResult, tool
from agent.tools.developer.matching import (
    closest_lines,
    line_of,
    numbered,
    occurrences,
    snippet_around,
)
from agent.tools.developer.workspace import (
    DeveloperState,
    display_path,
    ensure_text_file,
    read_text,
)
from conversation import ImageContent, TextContent

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
MAX_LINE_CHARS = 2000
COUNT_LINES_UP_TO_BYTES = 20_000_000
"""Past this size `view` does not read the rest of a file just to count its lines."""


def count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def file_tools(state: DeveloperState) -> list[Tool]:
    settings = state.settings

    @tool(read_only=True)
    async def view(ctx: ToolContext, path: str, view_range: list[int] | None = None) -> ToolResult:
        """Show a text file with line numbers (or an image). Long files come in parts.

        Args:
            path: The file, relative to the working directory.
            view_range: Optional [first, last] line numbers to show, 1-based and inclusive;
                last may be -1 for the end of the file.
        """
        target = state.resolve(path, ctx.working_dir, for_reading=True)
        shown = display_path(target, ctx.working_dir)
        mime = IMAGE_TYPES.get(target.suffix.lower())
        if mime and target.is_file() and target.stat().st_size <= settings.max_image_bytes:
            data = base64.b64encode(target.read_bytes()).decode("ascii")
            return ToolResult(
                (TextContent(text=f"{shown} ({mime})"), ImageContent(data=data, mime_type=mime))
            )
        ensure_text_file(target, shown)
        first, last = _parse_range(view_range)
        return ToolResult.text(_render_lines(target, shown, first, last, state))

    @tool(destructive=True)
    async def write(ctx: ToolContext, path: str, content: str) -> str:
        """Create a file or replace all of its content. Missing parent directories are created.

        Args:
            path: The file, relative to the working directory.
            content: The complete new content of the file.
        """
        target = state.resolve(path, ctx.working_dir)
        shown = display_path(target, ctx.working_dir)
        if target.is_dir():
            raise ToolError(f"{shown} is a directory; give a file path.")
        existed = target.exists()
        state.remember(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode("utf-8"))
        return f"{'Wrote' if existed else 'Created'} {shown} ({count_lines(content)} lines)"

    @tool(destructive=True)
    async def edit(ctx: ToolContext, path: str, old: str, new: str) -> str:
        """Replace one exact piece of a file. `old` must occur exactly once, whitespace included;
        include a few surrounding lines to make it unique. An empty `new` deletes `old`.

        Args:
            path: The file, relative to the working directory.
            old: The exact text to replace, as it is in the file.
            new: The text to put in its place.
        """
        target = state.resolve(path, ctx.working_dir)
        shown = display_path(target, ctx.working_dir)
        text = read_text(target, shown)
        if not old:
            raise ToolError(
                "old is empty; give the exact text to replace (use write for whole files)."
            )
        if old == new:
            raise ToolError("old and new are the same; nothing to change.")
        hits = occurrences(text, old)
        if not hits and "\r\n" in text:
            old, new = _crlf(old), _crlf(new)
            hits = occurrences(text, old)
        if not hits:
            raise ToolError(_no_match_message(text, old, shown))
        if len(hits) > 1:
            raise ToolError(_many_matches_message(text, old, hits, shown))
        state.remember(target)
        start = hits[0]
        updated = text[:start] + new + text[start + len(old) :]
        target.write_bytes(updated.encode("utf-8"))
        first = line_of(updated, start)
        after = snippet_around(updated, first, count_lines(new))
        return (
            f"Edited {shown}: replaced {count_lines(old)} line(s) with {count_lines(new)} "
            f"line(s). The changed part now reads:\n{after}"
        )

    @tool(destructive=True)
    async def undo_edit(ctx: ToolContext, path: str) -> str:
        """Undo the last write or edit of a file made in this session.

        Args:
            path: The file, relative to the working directory.
        """
        target = state.resolve(path, ctx.working_dir)
        shown = display_path(target, ctx.working_dir)
        versions = state.history.get(target)
        if not versions:
            raise ToolError(
                f"No earlier version of {shown} to restore: "
                "it was not written or edited in this session."
            )
        previous = versions.pop()
        if previous is None:
            target.unlink(missing_ok=True)
            return f"Removed {shown}: it did not exist before the last write."
        target.write_bytes(previous)
        left = (
            f"{len(versions)} earlier version(s) left" if versions else "no earlier versions left"
        )
        return f"Restored {shown} to its content before the last change ({left})."

    return [view, write, edit, undo_edit]


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def _parse_range(view_range: list[int] | None) -> tuple[int, int]:
    if view_range is None:
        return 1, -1
    if len(view_range) != 2:
        raise ToolError("view_range must be two numbers: [first, last] (last may be -1).")
    first, last = view_range
    if first < 1 or (last != -1 and last < first):
        raise ToolError(
            f"view_range {view_range} is invalid: lines start at 1 and last >= first (or -1)."
        )
    return first, last


def _render_lines(target: Path, shown: str, first: int, last: int, state: DeveloperState) -> str:
    settings = state.settings
    kept: list[str] = []
    used = 0
    total = 0
    stopped_at: int | None = None
    count_all = target.stat().st_size <= COUNT_LINES_UP_TO_BYTES
    with target.open("r", encoding="utf-8", errors="replace", newline="") as handle:
        for total, raw in enumerate(handle, start=1):
            if total < first or (last != -1 and total > last) or stopped_at is not None:
                if stopped_at is not None and not count_all:
                    break
                continue
            line = raw.rstrip("\r\n")
            if len(line) > MAX_LINE_CHARS:
                line = f"{line[:MAX_LINE_CHARS]}… [line cut, {len(line):,} characters]"
            if (
                len(kept) >= settings.view_max_lines
                or used + len(line) + 1 > settings.view_max_bytes
            ):
                stopped_at = total
                continue
            kept.append(line)
            used += len(line) + 1
    if total == 0:
        return f"{shown} is empty."
    if first > total:
        raise ToolError(f"{shown} has only {total} lines; view_range starts at {first}.")
    end = first + len(kept) - 1
    of_total = f"of {total}" if count_all or stopped_at is None else "of more"
    header = f"{shown} (lines {first}-{end} {of_total})"
    body = numbered(kept, first)
    if stopped_at is not None:
        body += (
            f"\n[Stopped at {settings.view_max_lines} lines / {settings.view_max_bytes:,} bytes. "
            f"Use view_range=[{stopped_at}, ...] to see more.]"
        )
    return f"{header}\n{body}"


def _no_match_message(text: str, old: str, shown: str) -> str:
    message = (
        f"No match for old in {shown}; nothing was changed. old must match the file exactly, "
        "including whitespace and indentation."
    )
    best = closest_lines(text, old)
    if best is not None and best[2] > 0.3:
        first, lines, ratio = best
        message += f"\nThe most similar lines ({ratio:.0%} alike) are:\n{numbered(lines, first)}"
    return message


def _many_matches_message(text: str, old: str, hits: list[int], shown: str) -> str:
    lines = [line_of(text, h) for h in hits]
    parts = [
        f"old occurs {len(hits)} times in {shown} (at lines {', '.join(map(str, lines))}); "
        "nothing was changed. Include more surrounding lines so that it matches exactly once."
    ]
    for line in lines[:2]:
        parts.append(f"At line {line}:\n{snippet_around(text, line, count_lines(old), context=1)}")
    if len(lines) > 2:
        parts.append(f"…and {len(lines) - 2} more.")
    return "\n".join(parts)
