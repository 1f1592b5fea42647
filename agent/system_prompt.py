"""The system prompt: `prompts/system.md` plus project hints, stable within the hour.

The date is hour-granular and the text is built once per session (hints reloaded only when
asked), so the provider's prompt cache keeps hitting. Hints of subdirectories that tools touch
are not added here: they arrive as agent-only messages after tool results, which keeps this
prompt — and its cache — unchanged for the whole session.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

import prompts
from conversation import sanitize_text


def build_system_prompt(
    *,
    working_dir: Path,
    hints: str,
    tool_names: Sequence[str],
    chat_mode: bool,
    extension_instructions: Mapping[str, str],
    now: datetime | None = None,
    appended: str | None = None,
) -> str:
    """The system prompt; `appended` (the user's `append_system_prompt`) goes last."""
    now = now or datetime.now().astimezone()
    instructions = "\n\n".join(
        f"## {name}\n{text.strip()}"
        for name, text in extension_instructions.items()
        if text.strip()
    )
    return sanitize_text(
        prompts.render(
            "system.md",
            date=now.strftime("%Y-%m-%d %H:00 %Z").strip(),
            working_dir=str(working_dir),
            os=platform.system(),
            tool_names=list(tool_names),
            chat_mode=chat_mode,
            extensions_instructions=instructions,
            hints=hints.strip(),
        )
        + (f"\n\n{appended.strip()}" if appended and appended.strip() else "")
    )
