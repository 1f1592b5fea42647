"""A recorded model and recorded tools, so a transcript can be replayed through the real
reply loop (`Agent.reply`) without a model or a machine to run its tools on.

- `RecordedProvider` answers each model call of the loop with the transcript's next
  assistant message. A request larger than the window raises the real
  `ContextLengthExceeded`, as a model would (a provider that manages its own context, the
  `none` baseline, sends it anyway and it is marked as over). Every other request (compaction,
  tool-pair notes) goes to the summarizer, and its calls and input tokens are counted.
- `RecordedTools` answers each tool call with the transcript's result for that call id.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence

from gosling.agent.tools.base import ToolContext
from gosling.agent.tools.manager import ExtensionManager
from gosling.context_mgmt.tokens import TokenCounter
from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse
from gosling.providers import (
    Completed,
    ContextLengthExceeded,
    ModelConfig,
    Provider,
    StreamEvent,
    ToolSpec,
    Usage,
)

CallObserver = Callable[[str, Sequence[Message], int, bool, Message], None]
"""Told of every call the provider answers: the system prompt, the request's messages, its
tokens, whether it was over the window, and the recorded reply it gets."""


class RecordedProvider(Provider):
    """The transcript's replies, one per model call (see the module docstring)."""

    name = "recorded"

    def __init__(
        self,
        summarizer: Provider,
        *,
        context_limit: int,
        counter: TokenCounter,
        manages_own_context: bool = False,
        on_call: CallObserver | None = None,
    ) -> None:
        super().__init__(ModelConfig("recorded", context_limit=context_limit))
        self.summarizer = summarizer
        self.counter = counter
        self._manages_own_context = manages_own_context
        self.on_call = on_call
        self.replies: deque[Message] = deque()
        """The current turn's recorded replies still to give."""
        self.side_calls = 0
        self.side_input_tokens = 0
        self.side_output_tokens = 0

    @property
    def manages_own_context(self) -> bool:
        return self._manages_own_context

    async def stream(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> AsyncIterator[StreamEvent]:
        if not self.replies:
            # The recording holds no reply here: its user spoke (or the run ended) while the
            # loop was about to call the model, which in gosling is a cancelled turn.
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
            await asyncio.sleep(0)
        tokens = self.counter.count_chat(system, messages, tools)
        over = tokens > self.model_config.context_limit
        if over and not self._manages_own_context:
            raise ContextLengthExceeded(
                f"the request holds {tokens:,} tokens; the window is "
                f"{self.model_config.context_limit:,}"
            )
        reply = self.replies.popleft()
        if self.on_call is not None:
            self.on_call(system, messages, tokens, over, reply)
        output = self.counter.count_message(reply)
        stop = "tool_use" if reply.tool_requests else "end_turn"
        yield Completed(reply, Usage(input_tokens=tokens, output_tokens=output, stop_reason=stop))

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> tuple[Message, Usage]:
        reply, usage = await self.summarizer.complete(system, messages, tools, fast=fast)
        self.side_calls += 1
        self.side_input_tokens += usage.input_tokens or 0
        self.side_output_tokens += usage.output_tokens or 0
        return reply, usage


class RecordedTools(ExtensionManager):
    """Tools that return the transcript's results by call id. They offer no schemas: a
    transcript does not say what its tools looked like, so requests count none."""

    def __init__(self) -> None:
        super().__init__()
        self.results: Mapping[str, ToolResponse] = {}

    async def respond(self, request: ToolRequest, ctx: ToolContext) -> ToolResponse:
        recorded = self.results.get(request.id)
        if recorded is not None:
            return recorded
        text = f"(the recording holds no result for tool call {request.id})"
        return ToolResponse(id=request.id, content=(TextContent(text=text),), is_error=True)
