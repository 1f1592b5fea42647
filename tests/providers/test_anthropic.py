"""Anthropic wire mapping: cache breakpoints, thinking round trips, tool results, usage."""

from __future__ import annotations

from typing import Any

from gosling.conversation import (
    ImageContent,
    Message,
    RedactedThinkingContent,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
)
from gosling.providers import Completed, ModelConfig, ToolRequestDone
from gosling.providers.anthropic import (
    AnthropicProvider,
    StreamAssembler,
    to_wire_messages,
    usage_from_wire,
)
from gosling.providers.sdk_provider import OPENAI_REASONING_PREFIX
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.script import FakeToolCall, Turn
from tests.providers.conftest import MakeProvider


def cached(block: dict[str, Any]) -> bool:
    return block.get("cache_control") == {"type": "ephemeral"}


def test_cache_breakpoints_on_system_and_the_last_two_user_turns() -> None:
    provider = AnthropicProvider(ModelConfig("claude-sonnet-4-6"), api_key="k")
    messages = [
        Message.user("one"),
        Message.assistant("two"),
        Message.user("three"),
        Message.assistant("four"),
        Message.user("five"),
    ]
    params = provider.request_params("system text", messages, [], "claude-sonnet-4-6")
    assert cached(params["system"][0])
    flags = [(m["role"], cached(m["content"][-1])) for m in params["messages"]]
    assert flags == [
        ("user", False),
        ("assistant", False),
        ("user", True),
        ("assistant", False),
        ("user", True),
    ]


def test_the_cache_anchor_is_a_fourth_breakpoint_and_the_last_turns_keep_theirs() -> None:
    provider = AnthropicProvider(ModelConfig("claude-sonnet-4-6"), api_key="k")
    anchor = Message.user("three")
    messages = [
        Message.user("one"),
        Message.assistant("two"),
        anchor.with_metadata(anchor.metadata.model_copy(update={"cache_anchor": True})),
        Message.assistant("four"),
        Message.user("five"),
        Message.assistant("six"),
        Message.user("seven"),
    ]
    params = provider.request_params("system text", messages, [], "claude-sonnet-4-6")
    flags = [cached(m["content"][-1]) for m in params["messages"]]
    assert flags == [False, False, True, False, True, False, True]
    blocks = [b for m in params["messages"] for b in m["content"]] + params["system"]
    assert sum(cached(b) for b in blocks) == 4  # the API allows four


def test_tool_results_open_the_user_turn_and_consecutive_turns_merge() -> None:
    call = ToolRequest(id="toolu_1", name="read", arguments={"path": "a.py"})
    result = ToolResponse(id="toolu_1", content=(TextContent(text="print(1)"),), is_error=True)
    wire = to_wire_messages(
        [
            Message.user("read a.py"),
            Message.assistant("Reading.", call),
            Message.user("also, hurry", result),
            Message.user("please"),
        ]
    )
    assert [m["role"] for m in wire] == ["user", "assistant", "user"]
    last = wire[-1]["content"]
    assert last[0]["type"] == "tool_result" and last[0]["is_error"] is True
    assert last[0]["content"] == [{"type": "text", "text": "print(1)"}]
    assert [b.get("text") for b in last[1:]] == ["also, hurry", "please"]
    assert wire[1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "read",
        "input": {"path": "a.py"},
    }


def test_images_and_empty_text() -> None:
    wire = to_wire_messages([Message.user("", ImageContent(data="aGk=", mime_type="image/jpeg"))])
    assert wire[0]["content"][0]["source"] == {
        "type": "base64",
        "media_type": "image/jpeg",
        "data": "aGk=",
    }
    assert len(wire[0]["content"]) == 1  # the empty text block is not sent (the API rejects it)


def test_thinking_round_trip_keeps_signatures_and_drops_foreign_reasoning() -> None:
    reply = Message(
        role="assistant",
        content=(
            ThinkingContent(thinking="plan", signature="sig"),
            RedactedThinkingContent(data="opaque=="),
            ThinkingContent(thinking="other", signature=OPENAI_REASONING_PREFIX + "{}"),
            ThinkingContent(thinking="unsigned", signature=""),
            TextContent(text="ok"),
        ),
    )
    blocks = to_wire_messages([Message.user("q"), reply])[1]["content"]
    assert blocks == [
        {"type": "thinking", "thinking": "plan", "signature": "sig"},
        {"type": "redacted_thinking", "data": "opaque=="},
        {"type": "text", "text": "ok"},
    ]


def test_usage_input_counts_cache_reads_and_writes() -> None:
    usage = usage_from_wire(
        {
            "input_tokens": 12,
            "cache_read_input_tokens": 1000,
            "cache_creation_input_tokens": 300,
            "output_tokens": 7,
        },
        "end_turn",
    )
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (
        1312,
        1000,
        300,
    )
    assert usage.output_tokens == 7 and usage.stop_reason == "end_turn"


def test_request_options_thinking_temperature_and_output_cap() -> None:
    config = ModelConfig("claude-opus-4-1", temperature=0.2)
    plain = AnthropicProvider(config, api_key="k").request_params(
        "", [Message.user("x")], [], "claude-opus-4-1"
    )
    assert plain["temperature"] == 0.2 and plain["max_tokens"] == 32_000 and "thinking" not in plain
    budget = AnthropicProvider(config, api_key="k", thinking=4096)
    params = budget.request_params("", [Message.user("x")], [], "claude-opus-4-1")
    assert params["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert "temperature" not in params  # extended thinking requires the default temperature
    adaptive = AnthropicProvider(config, api_key="k", thinking="adaptive")
    assert adaptive.request_params("", [], [], "claude-opus-4-8")["thinking"] == {
        "type": "adaptive"
    }


def test_one_million_context_suffix_becomes_the_beta_header() -> None:
    provider = AnthropicProvider(ModelConfig("claude-sonnet-4-5[1m]"), api_key="k")
    params = provider.request_params("", [], [], "claude-sonnet-4-5[1m]")
    assert params["model"] == "claude-sonnet-4-5"
    assert params["extra_headers"] == {"anthropic-beta": "context-1m-2025-08-07"}


def test_invalid_tool_json_becomes_a_tool_request_with_an_error() -> None:
    assembler = StreamAssembler("anthropic")
    tool_use = {"type": "tool_use", "id": "t1", "name": "edit", "input": {}}
    broken_json = {"type": "input_json_delta", "partial_json": '{"path": "a'}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 3, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": tool_use},
        {"type": "content_block_delta", "index": 0, "delta": broken_json},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "max_tokens"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    out = [e for event in events for e in assembler.feed(event)]
    done = assembler.finish()[-1]
    assert isinstance(done, Completed)
    [request] = done.message.tool_requests
    assert (
        request.arguments == {} and request.error is not None and "not valid JSON" in request.error
    )
    assert ToolRequestDone("t1", "edit", {}) in out
    assert done.usage.stop_reason == "max_tokens" and done.usage.output_tokens == 9


async def test_redacted_thinking_from_the_server_goes_back_unchanged(
    make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(
        Turn(
            thinking="visible part",
            signature="sig-A",
            redacted_thinking=["EncryptedBlob=="],
            tool_calls=[FakeToolCall("ls", {}, id="toolu_9")],
        ),
        Turn(text="done"),
    )
    provider = make_provider("anthropic", thinking=2048)
    first, _ = await provider.complete("", [Message.user("go")])
    assert RedactedThinkingContent(data="EncryptedBlob==") in first.content
    answer = Message.user(None, ToolResponse(id="toolu_9", content=(TextContent(text="ok"),)))
    await provider.complete("", [Message.user("go"), first, answer])
    sent = fake_llm.model_requests()[1].body
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert sent["messages"][1]["content"][:2] == [
        {"type": "thinking", "thinking": "visible part", "signature": "sig-A"},
        {"type": "redacted_thinking", "data": "EncryptedBlob=="},
    ]


async def test_fast_model_is_used_when_asked(
    make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add("summary", "answer")
    provider = make_provider("anthropic", fast_model="claude-haiku-4-5")
    await provider.complete("", [Message.user("summarise")], fast=True)
    await provider.complete("", [Message.user("answer")])
    assert [r.body["model"] for r in fake_llm.model_requests()] == [
        "claude-haiku-4-5",
        "claude-sonnet-4-6",
    ]
