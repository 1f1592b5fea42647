"""`CompactingProvider`: a provider that keeps one conversation inside the window by itself
(reference §6).

For programs that use a provider directly, without gosling's reply loop. When the inner
provider reports `ContextLengthExceeded`, the history is compacted (as automatic compaction
would: summary, continuation, the user's latest words) and the call is retried once with
that view; the original system prompt and tools are kept. The retry's outcome, a second
overflow included, is returned as is.

It remembers what it compacted: the next call whose messages start with the same messages
(compared by role and content, so a history rebuilt from dicts matches too) sends the
summary in their place plus what came after, without summarizing again. A history that no
longer starts that way (another conversation, an edited past) is sent as it is. One
`CompactingProvider` therefore serves one conversation at a time; `reset()` forgets.

The usage returned by a call that compacted includes the summary call(s); `on_compact` is
called with each `CompactionResult`. `manages_own_context` is true, so gosling's reply loop
never compacts on top of it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from gosling.context_mgmt.compact import CompactionResult, compact_messages
from gosling.conversation import Message
from gosling.providers import (
    Completed,
    ContextLengthExceeded,
    Provider,
    StreamEvent,
    ToolSpec,
    Usage,
)

if TYPE_CHECKING:
    from gosling.context_mgmt.templates import CompactionTemplates
    from gosling.context_mgmt.tokens import TokenCounter

OnCompact = Callable[[CompactionResult], None]


class CompactingProvider(Provider):
    """Wraps `inner`; compacts and retries once when a request does not fit."""

    def __init__(
        self,
        inner: Provider,
        *,
        counter: TokenCounter | None = None,
        templates: CompactionTemplates | None = None,
        on_compact: OnCompact | None = None,
    ) -> None:
        """`templates` replaces the compaction prompts (default: the built-ins);
        `on_compact(result)` runs after each compaction, before the retry."""
        super().__init__(inner.model_config)
        self.inner = inner
        self.name = inner.name
        self._counter = counter
        self.templates = templates
        self.on_compact = on_compact
        self.compactions = 0
        """How many times a call overflowed and was retried with a summary."""
        self.last_compaction: CompactionResult | None = None
        self._covered: list[tuple[Any, ...]] = []
        """Keys of the caller's messages the stored view stands for."""
        self._replacement: list[Message] = []
        """What is sent in their place: the agent view of the last compaction."""

    @property
    def manages_own_context(self) -> bool:
        return True

    def reset(self) -> None:
        """Forget the stored compaction (the next call sends its messages as they are)."""
        self._covered, self._replacement, self.last_compaction = [], [], None

    def view(self, messages: Sequence[Message]) -> list[Message]:
        """What a call with `messages` sends first: the stored summary in place of the
        messages it covers when `messages` start with them, else `messages` as they are."""
        covered = len(self._covered)
        if covered and len(messages) >= covered and _keys(messages[:covered]) == self._covered:
            return [*self._replacement, *messages[covered:]]
        return list(messages)

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> tuple[Message, Usage]:
        sent = self.view(messages)
        try:
            return await self.inner.complete(system, sent, tools, fast=fast)
        except ContextLengthExceeded:
            result = await self._compact(messages, sent)
        reply, usage = await self.inner.complete(system, result.agent_view, tools, fast=fast)
        return reply, result.usage + usage

    async def stream(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> AsyncIterator[StreamEvent]:
        """Overflow is caught only before the first event: once events have been yielded
        the caller has seen part of a reply, and restarting it would duplicate output. The
        final `Completed` event of a retry carries the summary's usage as well."""
        sent = self.view(messages)
        events = aiter(self.inner.stream(system, sent, tools, fast=fast))
        try:
            try:
                first = await anext(events)
            except StopAsyncIteration:
                return
            except ContextLengthExceeded:
                result = await self._compact(messages, sent)
            else:
                yield first
                async for event in events:
                    yield event
                return
        finally:
            await _close(events)
        retry = aiter(self.inner.stream(system, result.agent_view, tools, fast=fast))
        try:
            async for event in retry:
                if isinstance(event, Completed):
                    event = Completed(event.message, result.usage + event.usage)
                yield event
        finally:
            await _close(retry)

    async def _compact(self, messages: Sequence[Message], sent: list[Message]) -> CompactionResult:
        result = await compact_messages(
            self.inner, sent, counter=self._counter, templates=self.templates
        )
        self.compactions += 1
        self.last_compaction = result
        self._covered = _keys(messages)
        self._replacement = result.agent_view
        if self.on_compact is not None:
            self.on_compact(result)
        return result

    # -- synchronous forms (work inside a running event loop too) ---------------------------

    def complete_sync(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> tuple[Message, Usage]:
        """`complete` for synchronous code; inside a running event loop it runs on a worker
        thread with its own loop (so the inner provider must not be bound to the caller's)."""
        from gosling.providers.run_sync import run_sync

        return run_sync(self.complete(system, messages, tools, fast=fast))


def _keys(messages: Sequence[Message]) -> list[tuple[Any, ...]]:
    return [(m.role, m.content, m.metadata.agent_visible) for m in messages]


async def _close(events: AsyncIterator[StreamEvent]) -> None:
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()
