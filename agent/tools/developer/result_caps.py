"""The size cap on every tool result the agent sees, MCP servers' included.

A tool result lands in the session store and in every later model request, so one 20 MB
answer from a server would bloat both and can take hundreds of MB of memory. Results over
the shell's caps (2,000 lines / 50 KB of text) keep their head, cut to fit, and the full
text goes to a spill file that the model can read with `view`. Images over
`max_image_bytes` in all are saved to files and replaced by a note. Tools that bound their
own output (the shell, `view`) set `caps_own_output` and are left alone.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from pathlib import Path

from gosling.agent.tools.base import ResultPart, ToolResult
from gosling.agent.tools.developer.output import create_spill_file, head_within
from gosling.agent.tools.developer.workspace import DeveloperSettings
from gosling.agent.tools.spill import spill_dir_for
from gosling.conversation import ImageContent, TextContent

IMAGE_SUFFIXES = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif"}


@dataclass
class ResultCaps:
    """How big a tool result may be, and where the overflow goes."""

    max_lines: int = 2000
    max_bytes: int = 50_000
    max_image_bytes: int = 5_000_000
    """Images of one result, decoded, in all."""
    spill_dir: Path | None = None
    spill_files: set[Path] = field(default_factory=set)
    """Every file written here; share it with the developer tools so `view` can read them."""

    @classmethod
    def from_settings(cls, settings: DeveloperSettings) -> ResultCaps:
        return cls(
            settings.max_output_lines,
            settings.max_output_bytes,
            settings.max_image_bytes,
            settings.spill_dir,
        )

    def over(self, result: ToolResult) -> bool:
        """Whether `apply` would change anything (cheap: no copy of the text)."""
        texts = [p.text for p in result.content if isinstance(p, TextContent)]
        return self._text_over(texts) or _image_bytes(result.content) > self.max_image_bytes

    def apply(self, result: ToolResult, label: str, session_id: str | None = None) -> ToolResult:
        """`result` within the caps; blocking (it writes files), so call it in a thread.
        Spill files go to `spill_dir`, else to the directory of session `session_id`."""
        spill_dir = self.spill_dir or spill_dir_for(session_id)
        texts = [p.text for p in result.content if isinstance(p, TextContent)]
        cut = self._text_over(texts)
        parts: list[ResultPart] = []
        if cut:
            parts.append(TextContent(text=self._cut_text("\n".join(texts), label, spill_dir)))
        room = self.max_image_bytes
        for part in result.content:
            if isinstance(part, TextContent):
                if not cut:
                    parts.append(part)
            elif (size := _decoded_size(part)) <= room:
                parts.append(part)
                room -= size
            else:
                parts.append(TextContent(text=self._spill_image(part, size, label, spill_dir)))
        return ToolResult(tuple(parts), result.is_error)

    def _text_over(self, texts: list[str]) -> bool:
        chars = sum(len(t) for t in texts) + len(texts) - 1
        if chars > self.max_bytes:
            return True
        lines = sum(t.count("\n") for t in texts) + len(texts)
        if lines > self.max_lines:
            return True
        return chars * 4 > self.max_bytes and len("\n".join(texts).encode()) > self.max_bytes

    def _cut_text(self, text: str, label: str, spill_dir: Path) -> str:
        head = head_within(text, self.max_lines, self.max_bytes)
        total_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        shown_lines = head.count("\n") + 1 if head else 0
        data = text.encode("utf-8", errors="replace")
        try:
            path = self._spill(label, data, ".txt", spill_dir)
        except OSError as exc:
            where = f"the full output could not be saved ({exc.strerror or exc})"
        else:
            where = (
                f"the full output is in {path}; read the rest with view and a view_range "
                f"starting at line {shown_lines}"
            )
        return (
            f"{head}\n[Output cut to its first {shown_lines:,} of {total_lines:,} lines "
            f"({len(data):,} bytes in all; the cap is {self.max_lines:,} lines / "
            f"{self.max_bytes:,} bytes): {where}.]"
        )

    def _spill_image(self, image: ImageContent, size: int, label: str, spill_dir: Path) -> str:
        note = f"[{image.mime_type} image of {size:,} bytes left out: over the "
        note += f"{self.max_image_bytes:,}-byte limit for images in one tool result"
        try:
            data = base64.b64decode(image.data, validate=True)
        except (binascii.Error, ValueError):
            return note + "; it was not valid base64.]"
        try:
            path = self._spill(label, data, IMAGE_SUFFIXES.get(image.mime_type, ".img"), spill_dir)
        except OSError as exc:
            return note + f"; it could not be saved ({exc.strerror or exc}).]"
        return note + f"; saved to {path}.]"

    def _spill(self, label: str, data: bytes, suffix: str, spill_dir: Path) -> Path:
        safe_label = re.sub(r"[^A-Za-z0-9_-]", "_", label)
        handle, path = create_spill_file(safe_label, spill_dir, suffix)
        with handle:
            handle.write(data)
        self.spill_files.add(path.resolve())
        return path


def _decoded_size(image: ImageContent) -> int:
    padding = 2 if image.data.endswith("==") else 1 if image.data.endswith("=") else 0
    return len(image.data) * 3 // 4 - padding


def _image_bytes(content: tuple[ResultPart, ...]) -> int:
    return sum(_decoded_size(p) for p in content if isinstance(p, ImageContent))
