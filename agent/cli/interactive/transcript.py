"""What a resumed session shows first: its last few exchanges, as the user saw them.

Only user-visible messages count: summaries, hints and other agent-only messages stay out,
and messages hidden from the model by `/clear` or compaction still show. An exchange starts
at something the user typed (a message or a slash command).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from gosling.agent.cli.interactive.render import describe_call
from gosling.conversation import Message

COMMAND_KIND = "command"

EntryKind = Literal["user", "assistant", "tool", "command", "command_reply"]


@dataclass(frozen=True)
class Entry:
    kind: EntryKind
    text: str


@dataclass(frozen=True)
class Recent:
    entries: tuple[Entry, ...]
    earlier_exchanges: int
    """Exchanges before the ones shown."""


def _starts_exchange(message: Message) -> bool:
    if message.role != "user" or not message.metadata.user_visible:
        return False
    if message.metadata.kind == COMMAND_KIND:
        return True
    return message.metadata.kind is None and message.has_text_only()


def recent_exchanges(messages: Sequence[Message], exchanges: int = 3) -> Recent:
    """The last `exchanges` exchanges of `messages`, flattened into entries to print."""
    starts = [i for i, m in enumerate(messages) if _starts_exchange(m)]
    if not starts:
        return Recent((), 0)
    shown_from = starts[-exchanges] if len(starts) >= exchanges else starts[0]
    earlier = max(len(starts) - exchanges, 0)
    entries: list[Entry] = []
    for message in messages[shown_from:]:
        meta = message.metadata
        if not meta.user_visible:
            continue
        if meta.kind == COMMAND_KIND:
            kind: EntryKind = "command" if message.role == "user" else "command_reply"
            entries.append(Entry(kind, message.text))
        elif message.role == "user":
            if message.has_text_only() and message.text.strip():
                entries.append(Entry("user", message.text))
        else:
            if message.text.strip():
                entries.append(Entry("assistant", message.text))
            entries.extend(
                Entry("tool", describe_call(r.name, r.arguments)) for r in message.tool_requests
            )
    return Recent(tuple(entries), earlier)
