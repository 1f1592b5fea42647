"""The two prompts of a compaction, replaceable from code (reference §3.3, §5.7).

`compaction.md` is the summarizer's system prompt (it receives the transcript);
`compaction_summary.md` renders the structured summary the model returns. A program that
embeds gosling's compaction passes its own text for either through `CompactionTemplates`;
a field left as None uses the file, where the user's `<config dir>/prompts/` override wins
over the built-in one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

COMPACTION_TEMPLATE = "compaction.md"
SUMMARY_TEMPLATE = "compaction_summary.md"


@dataclass(frozen=True)
class CompactionTemplates:
    """Jinja sources for a compaction run; None means the (possibly overridden) file.

    `compaction` gets `messages` (the transcript), `read_files`, `modified_files` and
    `focus`; `summary` gets the `StructuredSummary` fields and `extra`.
    """

    compaction: str | None = None
    summary: str | None = None

    def render_compaction(self, **context: Any) -> str:
        return _render(COMPACTION_TEMPLATE, self.compaction, context)

    def render_summary(self, **context: Any) -> str:
        return _render(SUMMARY_TEMPLATE, self.summary, context)


DEFAULT_TEMPLATES = CompactionTemplates()


def _render(name: str, source: str | None, context: dict[str, Any]) -> str:
    from gosling.prompts import render, render_source

    if source is None:
        return render(name, **context)
    return render_source(source, label=f"{name} (passed in CompactionTemplates)", **context)
