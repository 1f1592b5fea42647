"""Chat Completions: streamed tool calls keyed by index, compatible servers' quirks, and the
request each server is sent."""

from __future__ import annotations

from typing import Any

import pytest

from gosling.conversation import (
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
)
from gosling.providers import (
    Completed,
    StreamEvent,
    ToolArgumentsDelta,
    ToolRequestDone,
    ToolRequestStarted,
)
from gosling.providers.openai_chat import ToolCallAccumulator, to_wire_messages
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.script import FakeToolCall, FakeUsage, Turn
from tests.providers.conftest import MakeProvider


def feed_all(
    accumulator: ToolCallAccumulator, fragments: list[dict[str, Any]]
) -> list[StreamEvent]:
    return [e for fragment in fragments for e in accumulator.feed(fragment)]


def calls(accumulator: ToolCallAccumulator) -> list[tuple[str, str, dict[str, Any]]]:
    _, requests = accumulator.finish()
    return [(r.id, r.name, r.arguments) for r in requests]


def test_parallel_calls_are_keyed_by_index() -> None:
    acc = ToolCallAccumulator()
    events = feed_all(
        acc,
        [
            {
                "index": 0,
                "id": "a",
                "type": "function",
                "function": {"name": "read", "arguments": ""},
            },
            {
                "index": 1,
                "id": "b",
                "type": "function",
                "function": {"name": "grep", "arguments": ""},
            },
            {"index": 0, "function": {"arguments": '{"path":'}},
            {"index": 1, "function": {"arguments": '{"q": "x"}'}},
            {"index": 0, "function": {"arguments": ' "a.py"}'}},
        ],
    )
    assert calls(acc) == [("a", "read", {"path": "a.py"}), ("b", "grep", {"q": "x"})]
    assert events[:2] == [ToolRequestStarted("a", "read"), ToolRequestStarted("b", "grep")]
    assert ToolArgumentsDelta("a", ' "a.py"}') in events


def test_whole_arguments_repeated_with_the_id_are_not_doubled() -> None:
    acc = ToolCallAccumulator(whole_argument_chunks=True)
    whole = {
        "index": 0,
        "id": "c1",
        "type": "function",
        "function": {"name": "ls", "arguments": '{"dir": "."}'},
    }
    feed_all(acc, [whole, whole])
    assert calls(acc) == [("c1", "ls", {"dir": "."})]


def test_every_call_on_index_zero_with_distinct_ids() -> None:
    acc = ToolCallAccumulator(whole_argument_chunks=True)
    feed_all(
        acc,
        [
            {"index": 0, "id": "c1", "function": {"name": "ls", "arguments": '{"dir": "a"}'}},
            {"index": 0, "id": "c2", "function": {"name": "ls", "arguments": '{"dir": "b"}'}},
        ],
    )
    assert calls(acc) == [("c1", "ls", {"dir": "a"}), ("c2", "ls", {"dir": "b"})]


def test_calls_without_ids_or_index_get_ids() -> None:
    acc = ToolCallAccumulator(whole_argument_chunks=True)
    feed_all(
        acc,
        [
            {"function": {"name": "ls", "arguments": '{"dir": "a"}'}},
            {"function": {"name": "cat", "arguments": '{"file": "b"}'}},
        ],
    )
    found = calls(acc)
    assert [(name, args) for _, name, args in found] == [
        ("ls", {"dir": "a"}),
        ("cat", {"file": "b"}),
    ]
    assert all(call_id.startswith("call_") for call_id, _, _ in found)
    assert found[0][0] != found[1][0]


def test_strict_openai_mode_concatenates_everything() -> None:
    acc = ToolCallAccumulator()
    feed_all(
        acc,
        [
            {"index": 0, "id": "x", "function": {"name": "echo", "arguments": '{"a": 1}'}},
            {"index": 0, "function": {"arguments": "garbage"}},
        ],
    )
    _, [request] = acc.finish()
    assert request.error is not None and request.arguments == {}


def test_wire_messages_tool_results_images_and_thinking() -> None:
    call = ToolRequest(id="c1", name="shot", arguments={"url": "x"})
    result = ToolResponse(id="c1", content=(ImageContent(data="aW1n"),))
    wire = to_wire_messages(
        [
            Message.user("look"),
            Message(role="assistant", content=(ThinkingContent(thinking="hm"), call)),
            Message.user("what is it?", result),
        ]
    )
    assert wire[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "shot", "arguments": '{"url": "x"}'},
            }
        ],
    }
    assert wire[2] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "(the result is the image below)",
    }
    assert wire[3]["role"] == "user"
    assert wire[3]["content"][0] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,aW1n"},
    }
    assert wire[3]["content"][1] == {"type": "text", "text": "what is it?"}


OLLAMA_STYLE = frozenset(
    {"whole_arguments", "repeat_ids", "no_usage", "finish_stop", "reasoning_content"}
)


@pytest.mark.parametrize("streamed", [True, False])
async def test_ollama_style_stream_through_the_sdk(
    streamed: bool, make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(
        Turn(
            thinking="need two listings",
            text="Listing both.",
            tool_calls=[
                FakeToolCall("ls", {"dir": "a"}, id="c1"),
                FakeToolCall("ls", {"dir": "b"}, id="c2"),
            ],
            quirks=OLLAMA_STYLE | {"index_zero"},
        )
    )
    provider = make_provider("ollama", model="qwen3")
    if streamed:
        events = [e async for e in provider.stream("", [Message.user("ls a and b")])]
        last = events[-1]
        assert isinstance(last, Completed)
        message, usage = last.message, last.usage
        assert [e for e in events if isinstance(e, ToolRequestDone)] == [
            ToolRequestDone("c1", "ls", {"dir": "a"}),
            ToolRequestDone("c2", "ls", {"dir": "b"}),
        ]
    else:
        message, usage = await provider.complete("", [Message.user("ls a and b")])
    assert [(r.id, r.arguments) for r in message.tool_requests] == [
        ("c1", {"dir": "a"}),
        ("c2", {"dir": "b"}),
    ]
    assert message.text == "Listing both."
    assert ThinkingContent(thinking="need two listings") in message.content
    assert usage.input_tokens is None and usage.output_tokens is None  # the server sent none
    assert usage.stop_reason == "stop"


async def test_requests_per_server_kind(
    make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add("a", "b")
    await make_provider("openai", max_output_tokens=500).complete("sys", [Message.user("q")])
    await make_provider("vllm", model="qwen2.5", max_output_tokens=500).complete(
        "sys", [Message.user("q")]
    )
    openai_body, vllm_body = (r.body for r in fake_llm.model_requests())
    assert openai_body["max_completion_tokens"] == 500 and "max_tokens" not in openai_body
    assert vllm_body["max_tokens"] == 500 and "max_completion_tokens" not in vllm_body
    assert openai_body["messages"][0] == {"role": "system", "content": "sys"}


async def test_streaming_asks_for_usage(
    make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(
        Turn(text="hi", usage=FakeUsage(input_tokens=5, output_tokens=1, cache_read_tokens=64))
    )
    events = [e async for e in make_provider("openai").stream("", [Message.user("q")])]
    body = fake_llm.model_requests()[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    last = events[-1]
    assert isinstance(last, Completed)
    assert (last.usage.input_tokens, last.usage.cache_read_tokens) == (69, 64)


async def test_openrouter_sends_its_title_header(
    make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add("hi")
    await make_provider("openrouter", model="anthropic/claude-sonnet-4.6").complete(
        "", [Message.user("q")]
    )
    request = fake_llm.model_requests()[0]
    assert request.headers.get("x-title") == "gosling"
    assert request.headers["authorization"] == "Bearer test-key"


def test_text_only_user_messages_stay_plain_strings() -> None:
    wire = to_wire_messages(
        [Message.user("hello"), Message(role="user", content=(TextContent(text="again"),))]
    )
    assert wire == [{"role": "user", "content": "hello"}, {"role": "user", "content": "again"}]
