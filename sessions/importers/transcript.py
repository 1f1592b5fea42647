"""What an importer hands back: the messages of one agent run plus an honest account of the file.

Imports are lossy by nature (other tools log things gosling has no word for), so every
transcript carries counts of what was read, what became messages and what was skipped and why.
A caller can show them, and the corpus tests compare them with the counts the sources publish.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from gosling.conversation import Message

TranscriptFormat = Literal[
    "claude-code", "mini-swe-agent", "openhands", "openai-chat", "gosling-jsonl"
]
FORMATS: tuple[TranscriptFormat, ...] = (
    "claude-code",
    "mini-swe-agent",
    "openhands",
    "openai-chat",
    "gosling-jsonl",
)


@dataclass(frozen=True)
class ImportStats:
    """Counts for one imported transcript.

    `records` are the units the source format is made of (JSONL records, chat messages,
    OpenHands events); `record_kinds` splits them by type ("user", "action:run", ...).
    `skipped` counts, by reason, the records and content blocks that became no message part.
    `unanswered_tool_calls` are requests no tool result follows (a run cut short, a final
    submit); `orphan_tool_results` answer no request of the assistant message before them.
    """

    records: int = 0
    record_kinds: Mapping[str, int] = field(default_factory=dict)
    messages: int = 0
    tool_calls: int = 0
    tool_results: int = 0
    unanswered_tool_calls: int = 0
    orphan_tool_results: int = 0
    skipped: Mapping[str, int] = field(default_factory=dict)

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())

    def kinds_starting(self, prefix: str) -> int:
        """Records whose kind starts with `prefix`, e.g. all `"observation:"` events."""
        return sum(n for kind, n in self.record_kinds.items() if kind.startswith(prefix))


@dataclass(frozen=True)
class ImportedTranscript:
    """One agent run in gosling's vocabulary.

    `system_prompt` is kept apart from `messages` because gosling sends it separately.
    `info` holds short facts from the source worth showing (model, working dir, session or
    instance id, exit status); keys depend on the format.
    """

    source_format: TranscriptFormat
    messages: tuple[Message, ...]
    stats: ImportStats
    system_prompt: str | None = None
    title: str | None = None
    source: str = ""
    info: Mapping[str, str] = field(default_factory=dict)
