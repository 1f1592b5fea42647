"""`FunctionProvider`: a provider built from a plain function, sync or async.

For tests, and for wrapping a client the caller already has:

    def my_model(system: str, messages: Sequence[Message]) -> str:
        return client.generate(system, [m.text for m in messages])

    provider = FunctionProvider(my_model, context_limit=32_000)

The function gets the system prompt and the messages to send (`tools` too, when it has a
parameter of that name) and returns the reply: a `str`, an assistant `Message`, or a
`(Message, Usage)` pair when it knows the token counts (without them, gosling estimates where
it needs a figure). A coroutine function is awaited; a plain one is called in place (it
blocks the event loop while it runs, like any synchronous client would). To report a window
overflow, raise `gosling.providers.ContextLengthExceeded`.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Union

from gosling.conversation import Message
from gosling.providers.base import (
    DEFAULT_CONTEXT_LIMIT,
    Completed,
    ModelConfig,
    Provider,
    StreamEvent,
    TextDelta,
    ToolSpec,
    Usage,
)

Reply = Union[str, Message, tuple[Message, Usage]]  # noqa: UP007 (a runtime alias)
ModelFunction = Callable[..., Reply | Awaitable[Reply]]
"""`(system, messages[, tools]) -> str | Message | (Message, Usage)`, or a coroutine function."""


class FunctionProvider(Provider):
    """Calls `function` once per model call; `fast` calls (summaries) use it too."""

    name = "function"

    def __init__(
        self,
        function: ModelFunction,
        *,
        model: str = "function",
        context_limit: int = DEFAULT_CONTEXT_LIMIT,
        max_output_tokens: int | None = None,
    ) -> None:
        """`context_limit` is the window gosling plans against (tokens per request)."""
        if not callable(function):
            raise TypeError(f"FunctionProvider needs a callable, got {type(function).__name__}")
        super().__init__(
            ModelConfig(
                model=model, context_limit=context_limit, max_output_tokens=max_output_tokens
            )
        )
        self.function = function
        try:
            self._takes_tools = "tools" in inspect.signature(function).parameters
        except (TypeError, ValueError):
            self._takes_tools = False

    async def stream(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> AsyncIterator[StreamEvent]:
        message, usage = await self.complete(system, messages, tools, fast=fast)
        if message.text:
            yield TextDelta(message.text)
        yield Completed(message, usage)

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> tuple[Message, Usage]:
        if self._takes_tools:
            result = self.function(system, list(messages), tools=tuple(tools))
        else:
            result = self.function(system, list(messages))
        if inspect.isawaitable(result):
            result = await result
        return _as_reply(result)


def _as_reply(result: object) -> tuple[Message, Usage]:
    if isinstance(result, str):
        return Message.assistant(result), Usage(stop_reason="end_turn")
    if isinstance(result, Message):
        return _assistant(result), Usage(stop_reason="end_turn")
    if (
        isinstance(result, tuple)
        and len(result) == 2
        and isinstance(result[0], Message)
        and isinstance(result[1], Usage)
    ):
        return _assistant(result[0]), result[1]
    raise TypeError(
        "a FunctionProvider function must return a str, an assistant Message or a "
        f"(Message, Usage) pair, not {type(result).__name__}"
    )


def _assistant(message: Message) -> Message:
    if message.role != "assistant":
        raise TypeError("a FunctionProvider function returned a user Message; return the reply")
    return message
