"""Assemble messages from records the way providers need them, whatever the source format.

Two shapes recur in agent logs and both are repaired here, once for every format:
- one model response written as several records (Claude Code writes each content block on its
  own line; OpenHands logs each tool call of a response as its own action, with the result of
  the first in between). Records that share a `group` key join the assistant message that
  started the group, as long as only tool results came in between.
- tool results written one per record. Consecutive results become one user message with
  several tool responses, because providers want all answers to a turn together.
Consecutive plain user messages with the same visibility are joined too, the way the agents
themselves send them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from gosling.conversation import (
    Content,
    Message,
    MessageMetadata,
    Role,
    TextContent,
    ToolRequest,
    ToolResponse,
)
from gosling.sessions.importers.transcript import ImportedTranscript, ImportStats, TranscriptFormat

_VISIBLE = MessageMetadata()


@dataclass
class _Draft:
    role: Role
    parts: list[Content]
    metadata: MessageMetadata
    created: int
    group: str | None = None

    def holds_only_tool_results(self) -> bool:
        return self.role == "user" and all(isinstance(p, ToolResponse) for p in self.parts)

    def is_plain_user(self) -> bool:
        return self.role == "user" and not any(isinstance(p, ToolResponse) for p in self.parts)


@dataclass
class TranscriptBuilder:
    """Collects message parts record by record and counts what it reads and skips."""

    records: int = 0
    record_kinds: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    _drafts: list[_Draft] = field(default_factory=list)
    _created: int = 0

    # -- accounting ---------------------------------------------------------------------------

    def record(self, kind: str) -> None:
        self.records += 1
        self.record_kinds[kind] += 1

    def skip(self, reason: str, count: int = 1) -> None:
        if count > 0:
            self.skipped[reason] += count

    def at(self, created: int | None) -> None:
        """Stamp the following messages with `created` (epoch seconds) when it is known."""
        if created is not None:
            self._created = created

    # -- messages -----------------------------------------------------------------------------

    def user(self, parts: Iterable[Content], metadata: MessageMetadata = _VISIBLE) -> None:
        parts = list(parts)
        if not parts:
            return
        last = self._drafts[-1] if self._drafts else None
        if last is not None and last.is_plain_user() and last.metadata == metadata:
            last.parts.extend(parts)
            return
        self._drafts.append(_Draft("user", parts, metadata, self._created))

    def assistant(
        self,
        parts: Iterable[Content],
        *,
        group: str | None = None,
        metadata: MessageMetadata = _VISIBLE,
    ) -> None:
        parts = list(parts)
        if not parts:
            return
        if group is not None:
            target = self._open_group(group)
            if target is not None:
                target.parts.extend(parts)
                return
        self._drafts.append(_Draft("assistant", parts, metadata, self._created, group))

    def tool_results(
        self, responses: Iterable[ToolResponse], metadata: MessageMetadata = _VISIBLE
    ) -> None:
        responses = list(responses)
        if not responses:
            return
        last = self._drafts[-1] if self._drafts else None
        if last is not None and last.holds_only_tool_results() and last.metadata == metadata:
            last.parts.extend(responses)
            return
        self._drafts.append(_Draft("user", list(responses), metadata, self._created))

    def _open_group(self, group: str) -> _Draft | None:
        """The assistant draft of `group`, if only tool results were added after it."""
        for draft in reversed(self._drafts):
            if draft.role == "assistant":
                return draft if draft.group == group else None
            if not draft.holds_only_tool_results():
                return None
        return None

    # -- result -------------------------------------------------------------------------------

    def build(
        self,
        source_format: TranscriptFormat,
        *,
        source: str,
        system_prompt: str | None = None,
        title: str | None = None,
        info: Mapping[str, str] | None = None,
    ) -> ImportedTranscript:
        messages = tuple(
            Message(
                role=d.role,
                content=tuple(d.parts),
                metadata=d.metadata,
                id=f"imp_{n:05d}",
                created=d.created,
            )
            for n, d in enumerate(self._drafts, start=1)
        )
        return ImportedTranscript(
            source_format=source_format,
            messages=messages,
            stats=count_messages(
                messages,
                records=self.records,
                record_kinds=self.record_kinds,
                skipped=self.skipped,
            ),
            system_prompt=system_prompt or None,
            title=title or None,
            source=source,
            info=dict(info or {}),
        )


def count_messages(
    messages: Sequence[Message],
    *,
    records: int,
    record_kinds: Mapping[str, int],
    skipped: Mapping[str, int],
) -> ImportStats:
    """The stats of an import that produced `messages` from the records counted."""
    unanswered, orphans = _pairing_gaps(messages)
    return ImportStats(
        records=records,
        record_kinds=dict(record_kinds),
        messages=len(messages),
        tool_calls=sum(len(m.tool_requests) for m in messages),
        tool_results=sum(len(m.tool_responses) for m in messages),
        unanswered_tool_calls=unanswered,
        orphan_tool_results=orphans,
        skipped={reason: n for reason, n in skipped.items() if n},
    )


def _pairing_gaps(messages: Iterable[Message]) -> tuple[int, int]:
    """Requests left unanswered and responses answering nothing, judged the way providers
    judge: a response must answer a request of the assistant message right before it."""
    unanswered = 0
    orphans = 0
    pending: set[str] = set()
    for msg in messages:
        if msg.role == "assistant":
            unanswered += len(pending)
            pending = {p.id for p in msg.content if isinstance(p, ToolRequest)}
            continue
        for part in msg.content:
            if isinstance(part, ToolResponse):
                if part.id in pending:
                    pending.discard(part.id)
                else:
                    orphans += 1
    return unanswered + len(pending), orphans


def text_parts(*texts: str | None) -> list[Content]:
    """Text parts for the non-empty strings among `texts`."""
    return [TextContent(text=t) for t in texts if t]
