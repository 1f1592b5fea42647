"""`Message` and its visibility metadata.

`agent_visible` decides whether the model sees a message, `user_visible` whether the UI shows
it. Nothing is ever deleted: compaction and summaries flip flags on originals and add
replacements. Messages are immutable; every change returns a copy that shares the parts.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gosling.conversation.content import (
    Content,
    TextContent,
    ToolRequest,
    ToolResponse,
)

Role = Literal["user", "assistant"]
EffectiveRole = Literal["user", "assistant", "tool"]


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


TURN_CONTEXT_KIND = "turn_context"
"""`kind` of the per-turn context block: a request-only trailing user message that adapters
keep out of the cached prefix (`context_mgmt.turn_context`)."""


class MessageMetadata(BaseModel):
    """Who sees a message, and what gosling made it for.

    `kind` names synthetic messages ("summary", "continuation", "tool_summary", "hints",
    "command", ...) so renderers and `/context` can tell them apart; `source_ids` lists the
    messages a replacement stands in for, so the originals can be recalled. `masked` marks a
    tool-result message whose outputs the model is shown as short placeholders (observation
    masking); the original content stays in the message, so nothing is lost.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_visible: bool = True
    agent_visible: bool = True
    kind: str | None = None
    source_ids: tuple[str, ...] = ()
    masked: bool = False
    cache_anchor: bool = False
    """Only on a copy in a request, never stored: the provider is asked to cache the prompt
    up to this message too (a fourth Anthropic breakpoint, where old tool output is no
    longer trimmed, so a later trim re-sends only what follows it)."""

    @classmethod
    def agent_only(cls) -> MessageMetadata:
        return cls(user_visible=False, agent_visible=True)

    @classmethod
    def user_only(cls) -> MessageMetadata:
        return cls(user_visible=True, agent_visible=False)

    @classmethod
    def invisible(cls) -> MessageMetadata:
        return cls(user_visible=False, agent_visible=False)

    def with_agent_visible(self, visible: bool = True) -> MessageMetadata:
        return self.model_copy(update={"agent_visible": visible})

    def with_agent_invisible(self) -> MessageMetadata:
        return self.model_copy(update={"agent_visible": False})

    def with_user_visible(self, visible: bool = True) -> MessageMetadata:
        return self.model_copy(update={"user_visible": visible})

    def with_user_invisible(self) -> MessageMetadata:
        return self.model_copy(update={"user_visible": False})

    def with_masked(self, masked: bool = True) -> MessageMetadata:
        return self.model_copy(update={"masked": masked})

    def with_kind(self, kind: str | None, source_ids: Sequence[str] = ()) -> MessageMetadata:
        return self.model_copy(update={"kind": kind, "source_ids": tuple(source_ids)})


_DEFAULT_METADATA = MessageMetadata()


class Message(BaseModel):
    """One message of a conversation: a role, ordered content parts and metadata."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    content: tuple[Content, ...] = ()
    metadata: MessageMetadata = _DEFAULT_METADATA
    id: str = Field(default_factory=new_message_id)
    created: int = Field(default_factory=lambda: int(time.time()))

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def user(cls, text: str | None = None, *parts: Content) -> Message:
        return cls._make("user", text, parts)

    @classmethod
    def assistant(cls, text: str | None = None, *parts: Content) -> Message:
        return cls._make("assistant", text, parts)

    @classmethod
    def _make(cls, role: Role, text: str | None, parts: Iterable[Content]) -> Message:
        content: list[Content] = [] if text is None else [TextContent(text=text)]
        content.extend(parts)
        return cls(role=role, content=tuple(content))

    # -- copies -------------------------------------------------------------------------------

    def with_content(self, content: Iterable[Content]) -> Message:
        return self.model_copy(update={"content": tuple(content)})

    def with_metadata(self, metadata: MessageMetadata) -> Message:
        return self.model_copy(update={"metadata": metadata})

    def with_visibility(self, *, user: bool, agent: bool) -> Message:
        meta = self.metadata.model_copy(update={"user_visible": user, "agent_visible": agent})
        return self.with_metadata(meta)

    def agent_only(self) -> Message:
        return self.with_visibility(user=False, agent=True)

    def user_only(self) -> Message:
        return self.with_visibility(user=True, agent=False)

    def with_agent_invisible(self) -> Message:
        return self.with_metadata(self.metadata.with_agent_invisible())

    def with_kind(self, kind: str | None, source_ids: Sequence[str] = ()) -> Message:
        return self.with_metadata(self.metadata.with_kind(kind, source_ids))

    def with_new_id(self) -> Message:
        return self.model_copy(update={"id": new_message_id()})

    # -- queries ------------------------------------------------------------------------------

    @property
    def is_agent_visible(self) -> bool:
        return self.metadata.agent_visible

    @property
    def is_user_visible(self) -> bool:
        return self.metadata.user_visible

    @property
    def text(self) -> str:
        """All text parts joined by newlines; other parts are ignored."""
        return "\n".join(p.text for p in self.content if isinstance(p, TextContent))

    @property
    def tool_requests(self) -> list[ToolRequest]:
        return [p for p in self.content if isinstance(p, ToolRequest)]

    @property
    def tool_responses(self) -> list[ToolResponse]:
        return [p for p in self.content if isinstance(p, ToolResponse)]

    @property
    def effective_role(self) -> EffectiveRole:
        """ "tool" for a user message carrying tool responses, else the role."""
        if self.role == "user" and any(isinstance(p, ToolResponse) for p in self.content):
            return "tool"
        return self.role

    def has_text_only(self) -> bool:
        """At least one text part and no tool requests or responses."""
        has_text = False
        for part in self.content:
            if isinstance(part, ToolRequest | ToolResponse):
                return False
            has_text = has_text or isinstance(part, TextContent)
        return has_text
