"""The name a session gets from its first prompt, in `run`, `session` and `batch` alike,
and the tag of sessions no user typed into."""

from __future__ import annotations

ORIGIN_KEY = "gosling.origin"
"""Extension data key naming what started a session that no user typed into ("batch");
`gosling sessions list` leaves those out unless asked (`--all`)."""


def session_name_from(prompt: str, width: int = 60) -> str:
    """A session name from the first line of the prompt, cut at a word near `width`."""
    line = next((ln.strip() for ln in prompt.splitlines() if ln.strip()), "")
    if len(line) <= width:
        return line
    cut = line[:width].rsplit(" ", 1)[0] or line[:width]
    return cut.rstrip(" ,.;:") + "…"
