"""File tools: view, write, edit (unique exact match) and undo_edit."""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from stat import S_ISREG

from gosling.agent.tools.base import Tool, ToolContext, ToolError, ToolResult, tool
from gosling.agent.tools.developer.matching import (
    closest_lines,
    find_unique,
    line_of,
    many_matches_message,
    numbered,
    snippet_around,
)
from gosling.agent.tools.developer.safe_io import (
    lstat_in,
    open_regular,
    read_if_regular,
    read_regular,
    unlink_regular,
    write_regular,
)
from gosling.agent.tools.developer.workspace import (
    BINARY_SNIFF_BYTES,
    DeveloperState,
    digest,
    display_path,
    looks_binary,
)
from gosling.conversation import ImageContent, TextContent

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

    @tool(read_only=True, caps_own_output=True)
    async def view(ctx: ToolContext, path: str, view_range: list[int] | None = None) -> ToolResult:
        """Show a text file with line numbers (or an image). Long files come in parts.

        Args:
            path: The file, relative to the working directory.
            view_range: Optional [first, last] line numbers to show, 1-based and inclusive;
                last may be -1 for the end of the file.
        """
        first, last = _parse_range(view_range)

        def work() -> ToolResult:
            target, root, shown = _locate(state, path, ctx, for_reading=True)
            mime = IMAGE_TYPES.get(target.suffix.lower())
            status = lstat_in(target, root, shown) if mime else None
            small = status is not None and status.st_size <= settings.max_image_bytes
            if mime and small and status and S_ISREG(status.st_mode):
                data = base64.b64encode(read_regular(target, root, shown)).decode("ascii")
                return ToolResult(
                    (
                        TextContent(text=f"{shown} ({mime})"),
                        ImageContent(data=data, mime_type=mime),
                    )
                )
            return ToolResult.text(_render_lines(target, root, shown, first, last, state))

        return await state.off_loop("view", work)

    @tool(destructive=True)
    async def write(ctx: ToolContext, path: str, content: str) -> str:
        """Create a file or replace all of its content. Missing parent directories are created.

        Args:
            path: The file, relative to the working directory.
            content: The complete new content of the file.
        """
        data = content.encode("utf-8")

        def work() -> str:
            target, root, shown = _locate(state, path, ctx)
            with state.lock:
                previous = _buffered(
                    state, target, read_if_regular(target, root, shown, writing=True)
                )
                _store(state, target, root, shown, data, existed=previous is not None)
                state.record(target, previous, data)
            verb = "Created" if previous is None else "Wrote"
            return f"{verb} {shown} ({count_lines(content)} lines)"

        return await state.off_loop("write", work)

    @tool(destructive=True)
    async def edit(ctx: ToolContext, path: str, old: str, new: str) -> str:
        """Replace one exact piece of a file. `old` must occur exactly once, whitespace included;
        include a few surrounding lines to make it unique. An empty `new` deletes `old`.

        Args:
            path: The file, relative to the working directory.
            old: The exact text to replace, as it is in the file.
            new: The text to put in its place.
        """

        def work() -> str:
            target, root, shown = _locate(state, path, ctx)
            with state.lock:
                data = _buffered(state, target, read_regular(target, root, shown))
                assert data is not None
                text = _decode_text(data, shown)
                if not old:
                    raise ToolError(
                        "old is empty; give the exact text to replace (use write for whole files)."
                    )
                if old == new:
                    raise ToolError("old and new are the same; nothing to change.")
                replace, with_text = old, new
                match = find_unique(text, replace)
                if match.count == 0 and "\r\n" in text:
                    replace, with_text = _crlf(old), _crlf(new)
                    match = find_unique(text, replace)
                if match.count == 0:
                    raise ToolError(_no_match_message(text, replace, shown))
                if match.count > 1:
                    raise ToolError(many_matches_message(text, replace, match, shown))
                start = match.offsets[0]
                updated = text[:start] + with_text + text[start + len(replace) :]
                encoded = updated.encode("utf-8")
                _store(state, target, root, shown, encoded, existed=True)
                state.record(target, data, encoded)
            first = line_of(updated, start)
            after = snippet_around(updated, first, count_lines(with_text))
            return (
                f"Edited {shown}: replaced {count_lines(replace)} line(s) with "
                f"{count_lines(with_text)} line(s). The changed part now reads:\n{after}"
            )

        return await state.off_loop("edit", work)

    @tool(destructive=True)
    async def undo_edit(ctx: ToolContext, path: str) -> str:
        """Undo the last write or edit of a file made in this session. Refused when the file
        was changed since (by you through the shell, the user or another program).

        Args:
            path: The file, relative to the working directory.
        """

        def work() -> str:
            target, root, shown = _locate(state, path, ctx)
            with state.lock:
                versions = state.history.get(target)
                if not versions:
                    raise ToolError(
                        f"No earlier version of {shown} to restore: "
                        "it was not written or edited in this session."
                    )
                current = _buffered(state, target, read_if_regular(target, root, shown))
                if current is None or digest(current) != versions[-1].written:
                    raise ToolError(
                        f"Not undone: {shown} changed after gosling's last write or edit of it "
                        f"({'it was deleted' if current is None else 'its content differs'}), "
                        "and undoing would throw that change away. Nothing was restored; view "
                        "the file and edit it instead."
                    )
                previous = versions.pop().previous
                if previous is None:
                    unlink_regular(target, root, shown)
                    return f"Removed {shown}: it did not exist before the last write."
                _store(state, target, root, shown, previous, existed=True)
            left = (
                f"{len(versions)} earlier version(s) left"
                if versions
                else "no earlier versions left"
            )
            return f"Restored {shown} to its content before the last change ({left})."

        return await state.off_loop("undo_edit", work)

    return [view, write, edit, undo_edit]


def _locate(
    state: DeveloperState, raw: str, ctx: ToolContext, *, for_reading: bool = False
) -> tuple[Path, Path, str]:
    """The resolved path, the working dir it is checked against, and how to show it."""
    target = state.resolve(raw, ctx.working_dir, for_reading=for_reading)
    return target, ctx.working_dir.resolve(), display_path(target, ctx.working_dir)


def _buffered(state: DeveloperState, target: Path, on_disk: bytes | None) -> bytes | None:
    """The file's content from the editor's buffer where the session has an editor that
    holds it (unsaved changes included), else `on_disk` (read, and checked, first)."""
    editor = state.settings.editor_files
    if editor is None or on_disk is None or looks_binary(on_disk[:BINARY_SNIFF_BYTES]):
        return on_disk
    text = editor.read(target)
    return on_disk if text is None else text.encode("utf-8")


def _store(
    state: DeveloperState, target: Path, root: Path, shown: str, data: bytes, *, existed: bool
) -> None:
    """Write an existing text file through the editor when there is one, else the disk."""
    editor = state.settings.editor_files
    if editor is not None and existed:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and editor.write(target, text):
            return
    write_regular(target, root, shown, data)


def _regular_or_none(target: Path, root: Path, shown: str) -> bytes | None:
    """The file's bytes for an editor-backed `view`; None when it is missing (the usual
    open then says so)."""
    return None if lstat_in(target, root, shown) is None else read_regular(target, root, shown)


def _decode_text(data: bytes, shown: str) -> str:
    """The file as text (newlines kept as they are), refusing binary content."""
    if looks_binary(data[:BINARY_SNIFF_BYTES]):
        raise _binary(shown, len(data))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(
            f"{shown} is not valid UTF-8 text; the file tools only edit text."
        ) from None


def _binary(shown: str, size: int) -> ToolError:
    return ToolError(
        f"{shown} looks like a binary file ({size:,} bytes); the file tools only read and "
        "edit text. Use the shell (for example `file` or `xxd | head`) to inspect it."
    )


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


def _render_lines(
    target: Path, root: Path, shown: str, first: int, last: int, state: DeveloperState
) -> str:
    settings = state.settings
    kept: list[str] = []
    used = 0
    total = 0
    stopped_at: int | None = None
    buffered = None
    if state.settings.editor_files is not None:
        buffered = _buffered(state, target, _regular_or_none(target, root, shown))
    source = io.BytesIO(buffered) if buffered is not None else open_regular(target, root, shown)
    with source as raw_handle:
        size = len(buffered) if buffered is not None else os.fstat(raw_handle.fileno()).st_size
        if looks_binary(raw_handle.read(BINARY_SNIFF_BYTES)):
            raise _binary(shown, size)
        raw_handle.seek(0)
        count_all = size <= COUNT_LINES_UP_TO_BYTES
        handle = io.TextIOWrapper(raw_handle, encoding="utf-8", errors="replace", newline="")
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
        handle.detach()
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
