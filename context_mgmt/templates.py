"""The prompts of a compaction, replaceable from code (reference §3.3, §5.7).

`compaction.md` is the summarizer's system prompt (it receives the transcript);
`compaction_summary.md` renders the structured summary the model returns;
`compaction_continuation.md` is what the model reads right after the summary. A program
that embeds gosling's compaction passes its own text for any of them through
`CompactionTemplates`; a field left as None uses the built-in file (or the override in the
directory a caller opted into with `prompts.use_override_dir`, as the command line does with
the user's `<config dir>/prompts/`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

COMPACTION_TEMPLATE = "compaction.md"
SUMMARY_TEMPLATE = "compaction_summary.md"
CONTINUATION_TEMPLATE = "compaction_continuation.md"
PREFIX_TEMPLATE = "compaction_prefix.md"

ContinuationText = Literal["conversation", "tool_loop", "manual", "summary_only"]
CONTINUATION_MODES: tuple[ContinuationText, ...] = (
    "conversation",
    "tool_loop",
    "manual",
    "summary_only",
)


@dataclass(frozen=True)
class CompactionTemplates:
    """Jinja sources for a compaction run; None means the built-in (or opted-in) file.

    `compaction` gets `messages` (the transcript), `read_files`, `modified_files`, `focus`
    and `instructions`; `summary` gets the `StructuredSummary` fields and `extra`;
    `continuation` gets `mode` (see `CONTINUATION_MODES`); `prefix` is the request that
    ends a compaction made on the session's own request prefix and gets `read_files`,
    `modified_files`, `focus`, `instructions` and `previous_summary`.
    """

    compaction: str | None = None
    summary: str | None = None
    continuation: str | None = None
    prefix: str | None = None

    def render_prefix(self, **context: Any) -> str:
        return _render(PREFIX_TEMPLATE, self.prefix, context)

    def render_compaction(self, **context: Any) -> str:
        return _render(COMPACTION_TEMPLATE, self.compaction, context)

    def render_summary(self, **context: Any) -> str:
        return _render(SUMMARY_TEMPLATE, self.summary, context)

    def render_continuation(self, mode: ContinuationText) -> str:
        return _render(CONTINUATION_TEMPLATE, self.continuation, {"mode": mode})


DEFAULT_TEMPLATES = CompactionTemplates()


class ContinuationTexts(Mapping[str, str]):
    """The continuation texts of `templates` by mode, rendered when read."""

    def __init__(self, templates: CompactionTemplates = DEFAULT_TEMPLATES) -> None:
        self._templates = templates

    def __getitem__(self, mode: str) -> str:
        if mode not in CONTINUATION_MODES:
            raise KeyError(mode)
        return self._templates.render_continuation(mode)

    def __iter__(self) -> Iterator[str]:
        return iter(CONTINUATION_MODES[:3])

    def __len__(self) -> int:
        return 3


def _render(name: str, source: str | None, context: dict[str, Any]) -> str:
    from gosling.prompts import render, render_source

    if source is None:
        return render(name, **context)
    return render_source(source, label=f"{name} (passed in CompactionTemplates)", **context)
