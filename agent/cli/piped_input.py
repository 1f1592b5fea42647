"""What `gosling run` does with standard input: alone it is the prompt; beside a prompt it is
content the prompt is about (`cat log | gosling run "why did this fail"`), sent after the
prompt in a fenced block, as Claude Code does, capped like a tool result."""

from __future__ import annotations

import os
import stat
from typing import IO

MAX_LINES = 2000
MAX_BYTES = 50_000
"""The caps of one tool result (`ResultCaps`): piped content costs the same context."""


def stdin_has_content(stream: IO[str]) -> bool:
    """Whether stdin is a pipe or a file (something was sent), not a terminal or /dev/null."""
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def with_piped_content(prompt: str, piped: str) -> str:
    """The prompt, then the piped text in a fence longer than any backtick run inside it; a
    cut is said in the message itself, so the model knows it saw only the head."""
    from gosling.agent.tools.developer.output import head_within

    if not piped.strip():
        return prompt
    kept = head_within(piped, MAX_LINES, MAX_BYTES)
    note = ""
    if len(kept) < len(piped.rstrip("\n")):
        total = piped.count("\n") + (0 if piped.endswith("\n") else 1)
        note = (
            f"\n[stdin cut: the first {kept.count(chr(10)) + 1} of {total} lines are shown "
            f"({len(piped.encode()):,} bytes in all)]"
        )
    fence = "```"
    while fence in kept:
        fence += "`"
    return f"{prompt.rstrip()}\n\n{fence}\n{kept.rstrip(chr(10))}\n{fence}{note}"
