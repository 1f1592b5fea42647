"""The compaction receipt: what a compaction dropped from the model's view.

After a compaction the model sees the summary (with its artifact trail) instead of the
originals, which stay stored and recallable. The receipt lists what the hidden originals
hold and the summary does not: files the session's tool calls touched, commands it ran and
error lines it saw that appear nowhere in the summary text. Counted from the same tool
events as the trail, so it is exact, not the model's opinion. Users see one line after every
compaction (`gosling session`, expandable with `/context`), the `receipt` field of
`compaction_finished` in stream-json, `gosling sessions show`, and the replay.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gosling.context_mgmt.artifact_trail import build_trail
from gosling.conversation import Message

RECEIPTS_KEY = "compaction_receipts"
"""Session extension data: the receipts of the session's compactions, oldest first."""
MAX_STORED_RECEIPTS = 20
MAX_LISTED = 50
"""Entries of each kind a receipt lists (the counts stay exact)."""


@dataclass(frozen=True)
class CompactionReceipt:
    files: tuple[str, ...] = ()
    """Files the hidden originals touched that the summary does not name."""
    commands: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    kept_files: int = 0
    kept_commands: int = 0
    kept_errors: int = 0
    dropped_counts: tuple[int, int, int] = (0, 0, 0)
    """Exact numbers of dropped files, commands and error lines (the lists are capped)."""

    @property
    def dropped(self) -> int:
        return sum(self.dropped_counts)

    def line(self) -> str:
        """One line for the terminal: what the summary kept and what it dropped."""
        files, commands, errors = self.dropped_counts
        kept = (
            f"kept {_count(self.kept_files, 'file')}, {_count(self.kept_commands, 'command')}, "
            f"{_count(self.kept_errors, 'error line')}"
        )
        if not self.dropped:
            return f"{kept}; nothing dropped"
        dropped = ", ".join(
            _count(n, what)
            for n, what in ((files, "file"), (commands, "command"), (errors, "error line"))
            if n
        )
        return f"{kept}; dropped {dropped} (recallable)"

    def details(self) -> list[str]:
        """The dropped entries, one per line, for `/context` and `sessions show`."""
        rows = [f"file: {p}" for p in self.files]
        rows += [f"command: {c}" for c in self.commands]
        rows += [f"error: {e}" for e in self.errors]
        return rows

    def to_json(self) -> dict[str, Any]:
        files, commands, errors = self.dropped_counts
        return {
            "kept": {
                "files": self.kept_files,
                "commands": self.kept_commands,
                "errors": self.kept_errors,
            },
            "dropped": {
                "files": list(self.files),
                "commands": list(self.commands),
                "errors": list(self.errors),
                "counts": {"files": files, "commands": commands, "errors": errors},
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CompactionReceipt:
        kept = data.get("kept") or {}
        dropped = data.get("dropped") or {}
        counts = dropped.get("counts") or {}
        return cls(
            files=tuple(dropped.get("files") or ()),
            commands=tuple(dropped.get("commands") or ()),
            errors=tuple(dropped.get("errors") or ()),
            kept_files=int(kept.get("files", 0)),
            kept_commands=int(kept.get("commands", 0)),
            kept_errors=int(kept.get("errors", 0)),
            dropped_counts=(
                int(counts.get("files", 0)),
                int(counts.get("commands", 0)),
                int(counts.get("errors", 0)),
            ),
        )


def build_receipt(hidden: Iterable[Message], kept_text: str) -> CompactionReceipt:
    """What `hidden` (the messages a compaction takes out of the view) holds that
    `kept_text` (the summary the model sees instead) does not."""
    trail = build_trail(hidden)
    files = list(dict.fromkeys(t.path for t in trail.files))
    commands = list(dict.fromkeys(c.command for c in trail.commands))
    errors = list(trail.errors)
    lost_files = [p for p in files if p not in kept_text]
    lost_commands = [c for c in commands if c not in kept_text]
    lost_errors = [e for e in errors if e not in kept_text]
    return CompactionReceipt(
        files=tuple(lost_files[:MAX_LISTED]),
        commands=tuple(lost_commands[:MAX_LISTED]),
        errors=tuple(lost_errors[:MAX_LISTED]),
        kept_files=len(files) - len(lost_files),
        kept_commands=len(commands) - len(lost_commands),
        kept_errors=len(errors) - len(lost_errors),
        dropped_counts=(len(lost_files), len(lost_commands), len(lost_errors)),
    )


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")
