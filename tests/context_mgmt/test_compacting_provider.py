"""`CompactingProvider`: overflow becomes summarize-and-retry-once (reference §6)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest

from gosling.context_mgmt import CompactingProvider, CompactionTemplates
from gosling.conversation import Message
from gosling.providers import (
    Completed,
    ContextLengthExceeded,
    ModelConfig,
    Provider,
    RateLimited,
    ScriptedProvider,
    StreamEvent,
    TextDelta,
    ToolSpec,
)

from .builders import STRUCTURED_REPLY, calls, results

TOOLS = (ToolSpec("read_file", "Read a file"),)
HISTORY = [
    Message.user("Fix the parser bug"),
    calls("c1", path="src/parser.py"),
    results(("c1", "def scan(): ...")),
]


async def test_complete_passes_through_when_it_fits() -> None:
    inner = ScriptedProvider(["All good."])
    provider = CompactingProvider(inner)
    reply, _ = await provider.complete("system", HISTORY, TOOLS)
    assert reply.text == "All good."
    assert len(inner.requests) == 1 and provider.compactions == 0


async def test_complete_compacts_and_retries_once() -> None:
    inner = ScriptedProvider([ContextLengthExceeded("too long"), STRUCTURED_REPLY, "Carrying on."])
    provider = CompactingProvider(inner)
    reply, _ = await provider.complete("the system prompt", HISTORY, TOOLS)

    assert reply.text == "Carrying on."
    assert provider.compactions == 1
    _first, summarizing, retry = inner.requests
    assert summarizing.fast and summarizing.tools == ()
    assert retry.system == "the system prompt" and retry.tools == TOOLS
    assert [(m.role, m.metadata.kind) for m in retry.messages] == [
        ("user", "summary"),
        ("assistant", "continuation"),
        ("user", "preserved_user"),
    ]
    assert retry.messages[-1].text == "Fix the parser bug"


async def test_prompts_passed_from_code_are_used_for_its_summaries() -> None:
    inner = ScriptedProvider([ContextLengthExceeded("too long"), STRUCTURED_REPLY, "Carrying on."])
    templates = CompactionTemplates(
        compaction="House style:\n{{ messages }}", summary="Goal: {{ user_intent[0] }}"
    )
    provider = CompactingProvider(inner, templates=templates)
    await provider.complete("the system prompt", HISTORY, TOOLS)
    _first, summarizing, retry = inner.requests
    assert summarizing.system.startswith('House style:\n{"role":"user"')
    assert retry.messages[0].text.startswith("Goal: ")


async def test_a_second_overflow_is_returned_as_is() -> None:
    second = ContextLengthExceeded("still too long")
    inner = ScriptedProvider([ContextLengthExceeded("too long"), STRUCTURED_REPLY, second])
    with pytest.raises(ContextLengthExceeded) as raised:
        await CompactingProvider(inner).complete("s", HISTORY)
    assert raised.value is second
    assert len(inner.requests) == 3


async def test_other_errors_are_not_intercepted() -> None:
    error = RateLimited("slow down")
    inner = ScriptedProvider([error])
    with pytest.raises(RateLimited):
        await CompactingProvider(inner).complete("s", HISTORY)
    assert len(inner.requests) == 1


async def test_stream_compacts_when_overflow_comes_before_any_event() -> None:
    inner = ScriptedProvider([ContextLengthExceeded("too long"), STRUCTURED_REPLY, "Carrying on."])
    provider = CompactingProvider(inner)
    events = [e async for e in provider.stream("s", HISTORY, TOOLS)]
    assert isinstance(events[-1], Completed)
    assert events[-1].message.text == "Carrying on."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Carrying on."
    assert inner.requests[2].streamed and inner.requests[2].messages[0].metadata.kind == "summary"


class _FailsMidStream(Provider):
    """Yields one event, then reports overflow: too late to retry."""

    def __init__(self) -> None:
        super().__init__(ModelConfig(model="mid-stream"))
        self.calls = 0

    async def stream(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        yield TextDelta("partial ")
        raise ContextLengthExceeded("overflow after output began")


async def test_stream_errors_after_the_first_event_pass_through() -> None:
    inner = _FailsMidStream()
    seen: list[StreamEvent] = []
    with pytest.raises(ContextLengthExceeded):
        async for event in CompactingProvider(inner).stream("s", HISTORY):
            seen.append(event)
    assert seen == [TextDelta("partial ")]
    assert inner.calls == 1


def test_it_manages_its_own_context_and_mirrors_the_inner_model() -> None:
    inner = ScriptedProvider(model_config=ModelConfig(model="m", context_limit=32_000))
    provider = CompactingProvider(inner)
    assert provider.manages_own_context
    assert provider.model_config.context_limit == 32_000
