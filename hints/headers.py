"""The headings above each block of hints, from templates an application can reword.

`HintHeaders()` uses the built-in templates `hint_header_global.md`, `hint_header_project.md`
and `hint_header_subdirectory.md` (which gets `directory`); a field set to Jinja text replaces
that one. A heading always ends with one newline, the hint text follows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

GLOBAL_TEMPLATE = "hint_header_global.md"
PROJECT_TEMPLATE = "hint_header_project.md"
SUBDIRECTORY_TEMPLATE = "hint_header_subdirectory.md"


@dataclass(frozen=True)
class HintHeaders:
    """Jinja sources of the three headings; None means the built-in (or opted-in) file."""

    global_hints: str | None = None
    project_hints: str | None = None
    subdirectory_hints: str | None = None

    def global_header(self) -> str:
        return _render(GLOBAL_TEMPLATE, self.global_hints)

    def project_header(self) -> str:
        return _render(PROJECT_TEMPLATE, self.project_hints)

    def subdirectory_header(self, directory: Path) -> str:
        return _render(SUBDIRECTORY_TEMPLATE, self.subdirectory_hints, directory=str(directory))


DEFAULT_HEADERS = HintHeaders()


def _render(name: str, source: str | None, **context: str) -> str:
    from gosling.prompts import render, render_source

    if source is None:
        text = render(name, **context)
    else:
        text = render_source(source, label=f"{name} (passed in HintHeaders)", **context)
    return text + "\n"
