"""The `Provider` interface: what the rest of gosling knows about a model.

Adapters translate the conversation vocabulary to and from each wire format here, at the
edge; nothing outside `providers/` sees SDK types. A provider streams typed events and ends
every stream with exactly one `Completed` event carrying the assembled message.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from gosling.conversation import Message

DEFAULT_CONTEXT_LIMIT = 128_000


class Usage(BaseModel):
    """Token usage of one model call.

    `input_tokens` counts every input token of the request, cached or not;
    `cache_read_tokens` and `cache_write_tokens` are the parts of it served from or written to
    the provider's prompt cache. `None` means the provider did not say. `stop_reason` is the
    provider's own word for why the reply ended ("end_turn", "stop", "length", ...).
    """

    model_config = ConfigDict(frozen=True)

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    stop_reason: str | None = None

    @property
    def total_tokens(self) -> int | None:
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)

    def __add__(self, other: Usage) -> Usage:
        def plus(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        return Usage(
            input_tokens=plus(self.input_tokens, other.input_tokens),
            output_tokens=plus(self.output_tokens, other.output_tokens),
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            stop_reason=other.stop_reason or self.stop_reason,
        )


TRUNCATED_STOP_REASONS = frozenset(
    {"max_tokens", "max_output_tokens", "length", "incomplete", "model_context_window_exceeded"}
)


@dataclass(frozen=True)
class ModelConfig:
    """The model a provider talks to and its limits."""

    model: str
    context_limit: int = DEFAULT_CONTEXT_LIMIT
    """Tokens the model accepts in one request (input and output together)."""
    max_output_tokens: int | None = None
    """Cap on the tokens of one reply; None leaves the provider's default."""
    temperature: float | None = None
    """Sampling temperature; None leaves the provider's default."""
    fast_model: str | None = None
    """A cheaper model for summaries; None uses `model`."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it: name, description and a JSON schema for its arguments."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})


# -- stream events ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True)
class ToolRequestStarted:
    id: str
    name: str


@dataclass(frozen=True)
class ToolArgumentsDelta:
    id: str
    delta: str


@dataclass(frozen=True)
class ToolRequestDone:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class UsageReported:
    usage: Usage


@dataclass(frozen=True)
class Completed:
    """Always the last event: the whole reply and its usage."""

    message: Message
    usage: Usage


StreamEvent = (
    TextDelta
    | ThinkingDelta
    | ToolRequestStarted
    | ToolArgumentsDelta
    | ToolRequestDone
    | UsageReported
    | Completed
)


class Provider(ABC):
    """A model behind an API. Subclasses implement `stream`; `complete` drains it."""

    name: str = "provider"

    def __init__(self, model_config: ModelConfig) -> None:
        self.model_config = model_config

    @property
    def manages_own_context(self) -> bool:
        """True when the provider keeps its own context in bounds (gosling then never
        compacts on its behalf)."""
        return False

    @abstractmethod
    def stream(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> AsyncIterator[StreamEvent]:
        """Stream one reply. `fast` asks for the configured fast model (summaries)."""

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> tuple[Message, Usage]:
        """One whole reply and its usage."""
        async for event in self.stream(system, messages, tools, fast=fast):
            if isinstance(event, Completed):
                return event.message, event.usage
        raise RuntimeError(f"{self.name}: stream ended without a Completed event")
