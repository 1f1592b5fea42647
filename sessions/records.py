"""The values the session store hands out and takes in.

Internal values are frozen dataclasses; only messages (pydantic, from `conversation`) and
`Usage` (from `providers`) cross the disk boundary as JSON.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from gosling.conversation import Message, MessageMetadata
from gosling.providers import Usage


class UsageKind(StrEnum):
    """Why a model call was made; compaction and summary calls cost tokens but do not describe
    the size of the conversation the agent carries on with."""

    NORMAL = "normal"
    COMPACTION = "compaction"
    SUMMARY = "summary"


@dataclass(frozen=True)
class TokenTotals:
    """Token counters of a session.

    `context_tokens` is the size of the agent's context as of the last normal call (its input)
    or as set by a compaction; the threshold check reads it. The other counters accumulate
    over every call, compactions and summaries included.
    """

    context_tokens: int | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    model_calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def plus(self, record: UsageRecord) -> TokenTotals:
        usage = record.usage
        context = self.context_tokens
        if record.kind is UsageKind.NORMAL and usage.input_tokens is not None:
            context = usage.input_tokens
        return TokenTotals(
            context_tokens=context,
            input_tokens=self.input_tokens + (usage.input_tokens or 0),
            output_tokens=self.output_tokens + (usage.output_tokens or 0),
            cache_read_tokens=self.cache_read_tokens + usage.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + usage.cache_write_tokens,
            model_calls=self.model_calls + 1,
        )


@dataclass(frozen=True)
class UsageRecord:
    """One model call in the usage ledger."""

    usage: Usage
    model: str = ""
    kind: UsageKind = UsageKind.NORMAL
    created: float = field(default_factory=time.time)


@dataclass(frozen=True)
class Session:
    """A session as listed: who it talks to, where it works, how big it is."""

    id: str
    name: str
    working_dir: Path
    provider: str | None
    model: str | None
    created_at: float
    updated_at: float
    message_count: int
    tokens: TokenTotals
    name_set_by_user: bool = False


@dataclass(frozen=True)
class SessionChanges:
    """Everything one turn writes, committed in one transaction.

    Metadata updates apply first (they name stored messages), then `append` in order, then the
    usage records. `context_tokens`, when set, overrides the context size the usage records
    imply: a compaction passes the size of what it kept.
    """

    append: Sequence[Message] = ()
    metadata: Mapping[str, MessageMetadata] = field(default_factory=dict)
    usage: Sequence[UsageRecord] = ()
    context_tokens: int | None = None

    def is_empty(self) -> bool:
        return not (self.append or self.metadata or self.usage) and self.context_tokens is None


@dataclass(frozen=True)
class SessionSnapshot:
    """A whole session, detached from any store: what export writes and import reads.

    Importers of other tools' formats build one of these; `SessionStore.restore` writes it.
    `id` is a wish: the store keeps it when it is free and well-formed, else picks a new one.
    `tokens` None means "add up the usage records".
    """

    name: str
    working_dir: Path
    messages: Sequence[Message]
    id: str | None = None
    provider: str | None = None
    model: str | None = None
    created_at: float | None = None
    updated_at: float | None = None
    name_set_by_user: bool = False
    usage: Sequence[UsageRecord] = ()
    tokens: TokenTotals | None = None
    extension_data: Mapping[str, Any] = field(default_factory=dict)
