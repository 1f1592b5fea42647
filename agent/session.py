"""`AgentSession`: one session's live state and its persistence.

Every change goes through here so memory and the store never disagree: messages are appended
and visibility flipped in one store transaction per change, usage is recorded per model call,
and the agent's view is told when it must rebuild.

Everything that belongs to one session lives here, never on `Agent`: its context pipeline,
its subdirectory-hint tracker and the system prompt and tool schemas its requests carry. So
opening, resuming, clearing or re-pointing a session cannot leak state into another one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gosling.agent.context_view import ContextView
from gosling.context_mgmt.tokens import TokenCounter
from gosling.conversation import Message, MessageMetadata
from gosling.hints import SubdirectoryHintTracker
from gosling.sessions.records import SessionChanges, UsageRecord
from gosling.sessions.store import SessionStore

if TYPE_CHECKING:
    from gosling.agent.context_pipeline import ContextPipeline
    from gosling.agent.hooks.dispatch import SessionHooks
    from gosling.agent.system_prompt import RequestPrefix


class StoreExtensionData:
    """Per-session extension data (the todo list) backed by the store when there is one."""

    def __init__(self, session: AgentSession) -> None:
        self._session = session

    def get(self, key: str) -> Any:
        return self._session.extension_data.get(key)

    def set(self, key: str, value: Any) -> None:
        self._session.set_extension_data(key, value)


@dataclass
class AgentSession:
    id: str | None
    working_dir: Path
    store: SessionStore | None
    counter: TokenCounter
    pipeline: ContextPipeline
    """Every context decision for this session (masking, summaries, compaction)."""
    hints: SubdirectoryHintTracker
    """Subdirectory hint files already sent in this session."""
    messages: list[Message] = field(default_factory=list)
    extension_data: dict[str, Any] = field(default_factory=dict)
    context_tokens: int = 0
    """The size of the context as last stored (provider-reported or retained)."""
    prefix: RequestPrefix | None = None
    """The system prompt and tool schemas this session's requests carry (built on its first
    turn, rebuilt when the permission mode or the extensions change)."""
    hooks: SessionHooks | None = None
    """The session's configured hooks; None when there are none (nothing runs for them)."""

    def __post_init__(self) -> None:
        self.view = ContextView(self.counter, self.pipeline.present)
        self._index = {m.id: i for i, m in enumerate(self.messages)}
        self.visible_tool_calls = _visible_tool_calls(self.messages)
        """Tool requests in the agent-visible history, kept up to date incrementally."""

    # -- writing --------------------------------------------------------------------------------

    def commit(
        self,
        *,
        append: Sequence[Message] = (),
        metadata: Mapping[str, MessageMetadata] | None = None,
        usage: Iterable[UsageRecord] = (),
        context_tokens: int | None = None,
    ) -> None:
        """Apply one group of changes in memory and in the store, atomically."""
        flips = dict(metadata or {})
        usage = list(usage)
        if self.store is not None and self.id is not None:
            self.store.commit(
                self.id,
                SessionChanges(
                    append=tuple(append),
                    metadata=flips,
                    usage=tuple(usage),
                    context_tokens=context_tokens,
                ),
            )
        for message_id, meta in flips.items():
            index = self._index.get(message_id)
            if index is not None:
                self.messages[index] = self.messages[index].with_metadata(meta)
        for message in append:
            self._index[message.id] = len(self.messages)
            self.messages.append(message)
            if message.metadata.agent_visible:
                self.visible_tool_calls += len(message.tool_requests)
        if flips:
            self.view.invalidate()
            self.visible_tool_calls = _visible_tool_calls(self.messages)
        if context_tokens is not None:
            self.context_tokens = context_tokens

    def append(self, *messages: Message) -> None:
        self.commit(append=messages)

    def set_extension_data(self, key: str, value: Any) -> None:
        if value is None:
            self.extension_data.pop(key, None)
        else:
            self.extension_data[key] = value
        if self.store is not None and self.id is not None:
            self.store.set_extension_data(self.id, key, value)

    # -- reading --------------------------------------------------------------------------------

    def get(self, message_id: str) -> Message | None:
        index = self._index.get(message_id)
        return None if index is None else self.messages[index]

    def release(self) -> None:
        if self.store is not None and self.id is not None:
            self.store.release(self.id)

    async def close(self) -> None:
        """Stop the session's background work (tool-pair summaries) and release it."""
        await self.pipeline.close()
        self.release()


def _visible_tool_calls(messages: Sequence[Message]) -> int:
    return sum(len(m.tool_requests) for m in messages if m.metadata.agent_visible)
