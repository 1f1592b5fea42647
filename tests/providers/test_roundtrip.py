"""Each adapter, through its real SDK and the loopback fake server, carries a multi-turn
tool-using conversation, streamed and not, and reports usage."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from gosling.conversation import Message, TextContent, ThinkingContent, ToolResponse
from gosling.providers import (
    Completed,
    Provider,
    StreamEvent,
    TextDelta,
    ToolArgumentsDelta,
    ToolRequestDone,
    ToolRequestStarted,
    ToolSpec,
    Usage,
    UsageReported,
)
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.script import FakeToolCall, FakeUsage, Turn
from tests.providers.conftest import API_PROVIDERS, MakeProvider

SHELL = ToolSpec(
    "shell",
    "Run a shell command",
    {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
)


async def ask(
    provider: Provider, streamed: bool, messages: Sequence[Message]
) -> tuple[Message, Usage, list[StreamEvent]]:
    if not streamed:
        message, usage = await provider.complete("You are terse.", messages, [SHELL])
        return message, usage, []
    events = [e async for e in provider.stream("You are terse.", messages, [SHELL])]
    final = events[-1]
    assert isinstance(final, Completed)
    assert sum(isinstance(e, Completed) for e in events) == 1
    return final.message, final.usage, events


def tool_result_sent(provider_name: str, body: dict[str, Any]) -> tuple[str, str]:
    """(call id, result text) of the tool result in a request body, in that API's shape."""
    if provider_name == "anthropic":
        block = body["messages"][-1]["content"][0]
        assert block["type"] == "tool_result"
        return block["tool_use_id"], block["content"][0]["text"]
    if provider_name == "openai-responses":
        item = body["input"][-1]
        assert item["type"] == "function_call_output"
        return item["call_id"], item["output"]
    message = body["messages"][-1]
    assert message["role"] == "tool"
    return message["tool_call_id"], message["content"]


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "not-streamed"])
@pytest.mark.parametrize("name", API_PROVIDERS)
async def test_multi_turn_tool_conversation(
    name: str, streamed: bool, make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(
        Turn(
            text="Let me list the files.",
            tool_calls=[FakeToolCall("shell", {"cmd": "ls -la"}, id="call_ls")],
            usage=FakeUsage(input_tokens=40, output_tokens=12, cache_read_tokens=300),
        ),
        Turn(text="There is one file: a.txt.", usage=FakeUsage(input_tokens=60, output_tokens=9)),
    )
    provider = make_provider(name)
    conversation = [Message.user("What files are here?")]

    first, usage, events = await ask(provider, streamed, conversation)

    assert first.text == "Let me list the files."
    [request] = first.tool_requests
    assert (request.id, request.name, request.arguments) == ("call_ls", "shell", {"cmd": "ls -la"})
    assert usage.input_tokens == 340  # uncached 40 + 300 read from the cache
    assert usage.cache_read_tokens == 300
    assert usage.output_tokens == 12
    if streamed:
        kinds = [type(e) for e in events]
        assert kinds.index(TextDelta) < kinds.index(ToolRequestStarted)
        assert kinds.index(ToolRequestStarted) < kinds.index(ToolArgumentsDelta)
        assert kinds.index(ToolArgumentsDelta) < kinds.index(ToolRequestDone)
        assert kinds[-2:] == [UsageReported, Completed]
        streamed_text = "".join(e.text for e in events if isinstance(e, TextDelta))
        assert streamed_text == first.text

    result = Message.user(None, ToolResponse(id="call_ls", content=(TextContent(text="a.txt"),)))
    conversation += [first, result]
    second, usage2, _ = await ask(provider, streamed, conversation)

    assert second.text == "There is one file: a.txt."
    assert second.tool_requests == []
    assert usage2.input_tokens == 60 and usage2.output_tokens == 9
    requests = fake_llm.model_requests()
    assert len(requests) == 2
    assert all(r.streamed is streamed for r in requests)
    assert tool_result_sent(name, requests[1].body) == ("call_ls", "a.txt")
    assert "test-key" in str(requests[0].headers)
    fake_llm.assert_complete()


@pytest.mark.parametrize("name", ["anthropic", "openai-responses"])
async def test_thinking_travels_back_with_the_tool_call(
    name: str, make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(
        Turn(
            thinking="The user wants a listing.",
            signature="sig-123",
            tool_calls=[FakeToolCall("shell", {"cmd": "ls"}, id="call_1")],
        ),
        Turn(text="Done."),
    )
    provider = make_provider(name)
    first, _, _ = await ask(provider, True, [Message.user("ls please")])
    thinking = [p for p in first.content if isinstance(p, ThinkingContent)]
    assert [t.thinking for t in thinking] == ["The user wants a listing."]

    result = Message.user(None, ToolResponse(id="call_1", content=(TextContent(text="a.txt"),)))
    await ask(provider, True, [Message.user("ls please"), first, result])

    body = fake_llm.model_requests()[1].body
    if name == "anthropic":
        sent = body["messages"][1]["content"][0]
        assert sent == {
            "type": "thinking",
            "thinking": "The user wants a listing.",
            "signature": "sig-123",
        }
    else:
        reasoning = [i for i in body["input"] if i.get("type") == "reasoning"]
        assert reasoning[0]["encrypted_content"] == "enc:sig-123"
        assert reasoning[0]["summary"] == [
            {"type": "summary_text", "text": "The user wants a listing."}
        ]
        # the reasoning item precedes the function call it led to
        kinds = [i.get("type") for i in body["input"]]
        assert kinds.index("reasoning") < kinds.index("function_call")
