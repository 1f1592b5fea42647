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


def _overflowing_at(limit: int, seen: list[str]) -> ScriptedProvider:
    """Overflows while a non-summary request holds a tool result (the original history) or
    more than `limit` messages."""

    def step(request: object) -> object:
        from gosling.providers import ScriptedReply, ScriptedRequest, Usage

        assert isinstance(request, ScriptedRequest)
        if request.fast:
            seen.append("summary")
            return ScriptedReply(
                text=STRUCTURED_REPLY, usage=Usage(input_tokens=500, output_tokens=50)
            )
        seen.append(f"call with {len(request.messages)}")
        if len(request.messages) > limit or any(m.tool_responses for m in request.messages):
            raise ContextLengthExceeded("too long")
        return ScriptedReply(text="ok", usage=Usage(input_tokens=40, output_tokens=4))

    return ScriptedProvider([step] * 20)


async def test_the_next_call_reuses_the_compaction_instead_of_summarizing_again() -> None:
    seen: list[str] = []
    compacted: list[object] = []
    provider = CompactingProvider(_overflowing_at(8, seen), on_compact=compacted.append)
    history = [*HISTORY, Message.assistant("Found it."), Message.user("Now add a test")]

    reply, usage = await provider.complete("s", history)
    assert seen == ["call with 5", "summary", "call with 3"]
    assert len(compacted) == 1 and provider.last_compaction is compacted[0]
    assert usage.input_tokens == 540 and usage.output_tokens == 54  # summary + retry

    history += [reply, Message.user("and run it")]
    seen.clear()
    _, usage = await provider.complete("s", history)
    assert seen == ["call with 5"]  # summary, continuation, copy, the two new ones
    assert usage.input_tokens == 40 and provider.compactions == 1


async def test_a_history_rebuilt_from_dicts_still_matches_but_another_one_does_not() -> None:
    from gosling import from_openai_chat, to_openai_chat

    seen: list[str] = []
    provider = CompactingProvider(_overflowing_at(8, seen))
    history = [*HISTORY, Message.assistant("Found it."), Message.user("Now add a test")]
    await provider.complete("s", history)
    rebuilt = from_openai_chat(to_openai_chat(history)).messages
    assert provider.view([*rebuilt, Message.assistant("x")])[0].metadata.kind == "summary"
    other = [Message.user("a different conversation")]
    assert provider.view(other) == other
    provider.reset()
    assert provider.view(history) == history


async def test_a_streamed_retry_reports_the_summary_usage_too() -> None:
    seen: list[str] = []
    provider = CompactingProvider(_overflowing_at(8, seen))
    history = [*HISTORY, Message.assistant("Found it."), Message.user("Now add a test")]
    events = [e async for e in provider.stream("s", history)]
    final = events[-1]
    assert isinstance(final, Completed) and final.usage.input_tokens == 540


def test_complete_sync_inside_and_outside_a_loop() -> None:
    import asyncio

    seen: list[str] = []
    provider = CompactingProvider(_overflowing_at(8, seen))
    history = [*HISTORY, Message.assistant("Found it."), Message.user("Now add a test")]
    reply, _ = provider.complete_sync("s", history)
    assert reply.text == "ok"

    async def inside() -> str:
        again, _ = provider.complete_sync("s", [*history, reply, Message.user("more")])
        return again.text

    assert asyncio.run(inside()) == "ok"
    assert provider.compactions == 1
