"""The system prompt: `prompts/system.md` plus project hints, stable within the hour.

The date is hour-granular and the text is built once per session (hints reloaded only when
asked), so the provider's prompt cache keeps hitting. Hints of subdirectories that tools touch
are not added here: they arrive as agent-only messages after tool results, which keeps this
prompt — and its cache — unchanged for the whole session.

`build_request_prefix` is the one place that decides what every request of a session starts
with (this prompt and the tool schemas); the reply loop and `/context` both use it.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from gosling import prompts
from gosling.conversation import sanitize_text
from gosling.providers import ToolSpec

HINT_IMPORT_WINDOW_SHARE = 0.10
"""The share of the model's window that `@file` imports of hint files may fill together."""
BYTES_PER_TOKEN = 4


def hint_import_budget(context_limit: int) -> int:
    """Bytes `@file` imports may add to a session's hints (an AGENTS.md importing sixty
    16 KiB files must not put 1 MiB into every request)."""
    return int(context_limit * HINT_IMPORT_WINDOW_SHARE * BYTES_PER_TOKEN)


@dataclass(frozen=True)
class RequestPrefix:
    """What every request of a session starts with."""

    system_prompt: str
    tool_specs: tuple[ToolSpec, ...]
    hints: str
    """The top-level hint text embedded in `system_prompt` (for `/context`)."""
    built_for: tuple[object, ...] | None = None
    """The inputs it was built from (mode, extensions): a change asks for a rebuild. None:
    given as is (a replayed transcript's own prompt), never rebuilt."""


def build_request_prefix(
    *,
    working_dir: Path,
    hint_files: Sequence[str],
    tool_specs: Sequence[ToolSpec],
    chat_mode: bool,
    extension_instructions: Mapping[str, str],
    now: datetime | None = None,
    appended: str | None = None,
    built_for: tuple[object, ...] | None = None,
    global_hint_files: Sequence[str] | None = None,
    context_limit: int | None = None,
) -> RequestPrefix:
    """The system prompt (with the hint files from the git root down to `working_dir`, and
    the user's `appended` text last) and the tool schemas; chat mode offers no tools.
    `global_hint_files`: the names looked up in the user's config dir (default
    `hint_files`); `context_limit` caps the hints' imports (`hint_import_budget`)."""
    from gosling.agent.user_inputs import user_hint_dirs
    from gosling.hints import load_hint_files

    specs = () if chat_mode else tuple(tool_specs)
    dirs = user_hint_dirs()
    hints = load_hint_files(
        working_dir,
        list(hint_files),
        global_dir=dirs.global_dir,
        home_dir=dirs.home_dir,
        global_filenames=None if global_hint_files is None else list(global_hint_files),
        import_budget_bytes=None if context_limit is None else hint_import_budget(context_limit),
    )
    system = build_system_prompt(
        working_dir=working_dir,
        hints=hints,
        tool_names=[s.name for s in specs],
        chat_mode=chat_mode,
        extension_instructions=extension_instructions,
        now=now,
        appended=appended,
    )
    return RequestPrefix(system, specs, hints, built_for)


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
