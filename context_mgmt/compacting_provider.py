"""`CompactingProvider`: a provider that recovers from overflow by itself (reference §6).

For programs that use a provider directly, without gosling's reply loop. When the inner
provider reports `ContextLengthExceeded`, the history is compacted (as automatic compaction
would: summary, continuation, the user's latest words) and the call is retried once with
that view; the original system prompt and tools are kept. The retry's outcome, a second
overflow included, is returned as is.

It is stateless: the caller's history is not changed, so the next call with the full history
overflows and compacts again. Callers that keep long sessions should use `compact_messages`
and store the result. `manages_own_context` is true, so gosling never compacts on top of it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from gosling.context_mgmt.compact import compact_messages
from gosling.conversation import Message
from gosling.providers import ContextLengthExceeded, Provider, StreamEvent, ToolSpec, Usage

if TYPE_CHECKING:
    from gosling.context_mgmt.templates import CompactionTemplates
    from gosling.context_mgmt.tokens import TokenCounter


class CompactingProvider(Provider):
    """Wraps `inner`; compacts and retries once when a request does not fit."""

    def __init__(
        self,
        inner: Provider,
        *,
        counter: TokenCounter | None = None,
        templates: CompactionTemplates | None = None,
    ) -> None:
        """`templates` replaces the compaction and summary prompts (default: the files)."""
        super().__init__(inner.model_config)
        self.inner = inner
        self.name = inner.name
        self._counter = counter
        self.templates = templates
        self.compactions = 0
        """How many times a call overflowed and was retried with a summary."""

    @property
    def manages_own_context(self) -> bool:
        return True

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> tuple[Message, Usage]:
        try:
            return await self.inner.complete(system, messages, tools, fast=fast)
        except ContextLengthExceeded:
            compacted = await self._compacted(messages)
        return await self.inner.complete(system, compacted, tools, fast=fast)

    async def stream(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> AsyncIterator[StreamEvent]:
        """Overflow is caught only before the first event: once events have been yielded
        the caller has seen part of a reply, and restarting it would duplicate output."""
        events = aiter(self.inner.stream(system, messages, tools, fast=fast))
        try:
            try:
                first = await anext(events)
            except StopAsyncIteration:
                return
            except ContextLengthExceeded:
                compacted = await self._compacted(messages)
            else:
                yield first
                async for event in events:
                    yield event
                return
        finally:
            await _close(events)
        retry = aiter(self.inner.stream(system, compacted, tools, fast=fast))
        try:
            async for event in retry:
                yield event
        finally:
            await _close(retry)

    async def _compacted(self, messages: Sequence[Message]) -> list[Message]:
        result = await compact_messages(
            self.inner, messages, counter=self._counter, templates=self.templates
        )
        self.compactions += 1
        return result.agent_view


async def _close(events: AsyncIterator[StreamEvent]) -> None:
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()
