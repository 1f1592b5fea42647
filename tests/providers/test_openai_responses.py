"""Responses API: stateless requests, reasoning items, function calls, terminal events."""

from __future__ import annotations

import pytest

from gosling.conversation import Message, TextContent, ThinkingContent, ToolRequest, ToolResponse
from gosling.providers import (
    Completed,
    ContextLengthExceeded,
    ModelConfig,
    RateLimited,
    ServerError,
)
from gosling.providers.openai_responses import (
    OpenAIResponsesProvider,
    ResponsesStreamAssembler,
    completed_from_response,
    encode_reasoning,
    to_wire_items,
)
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.script import Turn
from tests.providers.conftest import MakeProvider


def test_request_is_stateless_and_asks_for_encrypted_reasoning() -> None:
    provider = OpenAIResponsesProvider(
        ModelConfig("gpt-5", max_output_tokens=900), api_key="k", reasoning_effort="high"
    )
    params = provider.request_params("Be brief.", [Message.user("hi")], [], "gpt-5")
    assert params["store"] is False
    assert params["include"] == ["reasoning.encrypted_content"]
    assert params["instructions"] == "Be brief."
    assert params["reasoning"] == {"effort": "high", "summary": "auto"}
    assert params["max_output_tokens"] == 900
    assert params["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]


def test_items_keep_conversation_order_and_drop_foreign_thinking() -> None:
    reasoning = ThinkingContent(
        thinking="sum", signature=encode_reasoning({"id": "rs_1", "encrypted_content": "E"})
    )
    items = to_wire_items(
        [
            Message.user("q"),
            Message(
                role="assistant",
                content=(
                    ThinkingContent(thinking="anthropic's", signature="sig"),
                    reasoning,
                    TextContent(text="calling"),
                    ToolRequest(id="call_1", name="f", arguments={"x": 1}),
                ),
            ),
            Message.user("and then", ToolResponse(id="call_1", content=(TextContent(text="42"),))),
        ]
    )
    assert [i.get("type", i.get("role")) for i in items] == [
        "user",
        "reasoning",
        "assistant",
        "function_call",
        "function_call_output",
        "user",
    ]
    assert items[1] == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "sum"}],
        "encrypted_content": "E",
    }
    assert items[3]["arguments"] == '{"x": 1}'
    assert items[4] == {"type": "function_call_output", "call_id": "call_1", "output": "42"}


def test_incomplete_response_is_a_truncated_completion() -> None:
    done = completed_from_response(
        {
            "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
            "output": [{"type": "message", "content": [{"type": "output_text", "text": "cut"}]}],
            "usage": {
                "input_tokens": 10,
                "output_tokens": 50,
                "input_tokens_details": {"cached_tokens": 4},
            },
        },
        "openai-responses",
    )
    assert done.message.text == "cut"
    assert (done.usage.stop_reason, done.usage.input_tokens, done.usage.cache_read_tokens) == (
        "max_output_tokens",
        10,
        4,
    )


@pytest.mark.parametrize(
    ("code", "error"),
    [
        ("context_length_exceeded", ContextLengthExceeded),
        ("rate_limit_exceeded", RateLimited),
        ("server_error", ServerError),
    ],
)
def test_failed_response_maps_its_error_code(code: str, error: type[Exception]) -> None:
    assembler = ResponsesStreamAssembler("openai-responses")
    failed = {
        "type": "response.failed",
        "response": {"status": "failed", "error": {"code": code, "message": "m"}},
    }
    with pytest.raises(error):
        assembler.feed(failed)


def test_stream_without_a_terminal_event_is_a_server_error() -> None:
    assembler = ResponsesStreamAssembler("openai-responses")
    assembler.feed({"type": "response.created", "response": {}})
    with pytest.raises(ServerError, match="ended before"):
        assembler.finish()


def test_refusal_text_is_kept() -> None:
    assembler = ResponsesStreamAssembler("x")
    item = {
        "type": "message",
        "content": [{"type": "refusal", "refusal": "I can't help with that."}],
    }
    assembler.feed(
        {"type": "response.completed", "response": {"status": "completed", "output": [item]}}
    )
    last = assembler.finish()[-1]
    assert isinstance(last, Completed) and last.message.text == "I can't help with that."


async def test_reasoning_without_encrypted_content_when_not_asked(
    make_provider: MakeProvider, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(Turn(thinking="short plan", text="answer"))
    provider = make_provider("openai-responses")
    assert isinstance(provider, OpenAIResponsesProvider)
    provider.include_encrypted_reasoning = False
    message, _ = await provider.complete("", [Message.user("q")])
    [thinking] = [p for p in message.content if isinstance(p, ThinkingContent)]
    assert thinking.thinking == "short plan"
    assert "include" not in fake_llm.model_requests()[0].body
