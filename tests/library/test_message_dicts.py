"""Converters between gosling messages and OpenAI Chat, OpenAI Responses and Anthropic message
dicts: round trips keep every part the API can carry, and what cannot be converted is an
error naming it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from gosling import (
    ImageContent,
    Message,
    TextContent,
    ToolRequest,
    ToolResponse,
    from_anthropic,
    from_openai_chat,
    from_openai_responses,
    to_anthropic,
    to_openai_chat,
    to_openai_responses,
)
from gosling.conversation import ThinkingContent
from gosling.providers.openai_responses import encode_reasoning

PIXEL = "iVBORw0KGgo="


def _session() -> list[Message]:
    return [
        Message.user("What is in src/?", ImageContent(data=PIXEL, mime_type="image/png")),
        Message.assistant(
            "Let me look.",
            ToolRequest(id="call_1", name="shell", arguments={"command": "ls src"}),
            ToolRequest(id="call_2", name="read_file", arguments={"path": "README.md"}),
        ),
        Message(
            role="user",
            content=(
                ToolResponse(id="call_1", content=(TextContent(text="main.py\nutil.py"),)),
                ToolResponse(
                    id="call_2", content=(TextContent(text="no such file"),), is_error=True
                ),
                TextContent(text="also check tests/"),
            ),
        ),
        Message.assistant("There are two modules."),
    ]


def _shape(messages: list[Message]) -> list[tuple[str, list[Any]]]:
    return [(m.role, [p.model_dump() for p in m.content]) for m in messages]


def test_anthropic_round_trip_keeps_every_part() -> None:
    session = _session()
    signed = ThinkingContent(thinking="check the tree first", signature="sig-abc")
    session[1] = session[1].with_content((signed, *session[1].content))
    wire = to_anthropic(session)
    assert "cache_control" not in json.dumps(wire)
    back = from_anthropic(wire, system="Be brief.")
    assert back.system == "Be brief."
    assert _shape(back.messages) == _shape(session)


def _without_error_flags(messages: list[Message]) -> list[tuple[str, list[Any]]]:
    """OpenAI's tool messages carry no error flag: compare without it."""
    shaped = _shape(messages)
    for _, parts in shaped:
        for part in parts:
            part.pop("is_error", None)
    return shaped


@pytest.mark.parametrize(
    ("to", "back"),
    [(to_openai_chat, from_openai_chat), (to_openai_responses, from_openai_responses)],
    ids=["chat", "responses"],
)
def test_openai_round_trips_keep_text_tool_calls_results_and_images(
    to: Callable[..., list[dict[str, Any]]], back: Callable[..., Any]
) -> None:
    session = _session()
    wire = to(session, system="Be brief.")
    assert wire[0] == {"role": "system", "content": "Be brief."}
    system, messages = back(wire)
    assert system == "Be brief."
    assert _without_error_flags(messages) == _without_error_flags(session)


def test_responses_reasoning_items_come_back_as_thinking_that_can_be_sent_again() -> None:
    item = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "hm"}],
        "encrypted_content": "opaque",
    }
    converted = from_openai_responses([{"role": "user", "content": "hi"}, item])
    thinking = converted.messages[1].content[0]
    assert isinstance(thinking, ThinkingContent) and thinking.signature == encode_reasoning(item)
    assert to_openai_responses(converted.messages)[1]["encrypted_content"] == "opaque"


def test_chat_replies_with_reasoning_and_json_arguments_are_read() -> None:
    reply = {
        "role": "assistant",
        "content": None,
        "reasoning_content": "think",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}},
            {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "not json"}},
        ],
    }
    [message] = from_openai_chat([reply]).messages
    thinking, first, second = message.content
    assert isinstance(thinking, ThinkingContent) and thinking.thinking == "think"
    assert isinstance(first, ToolRequest) and first.arguments == {"a": 1}
    assert isinstance(second, ToolRequest) and second.error and "not valid JSON" in second.error


@pytest.mark.parametrize(
    ("convert", "dicts", "error"),
    [
        (from_openai_chat, [{"role": "function", "name": "f", "content": "x"}], "'function'"),
        (from_openai_chat, [{"content": "no role"}], "message 0 has no 'role'"),
        (
            from_openai_chat,
            [
                {
                    "role": "user",
                    "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}],
                }
            ],
            "only inline images",
        ),
        (from_openai_chat, [{"role": "tool", "content": "x"}], "no 'tool_call_id'"),
        (from_openai_responses, [{"type": "web_search_call", "id": "w"}], "'web_search_call'"),
        (
            from_anthropic,
            [{"role": "user", "content": [{"type": "document", "source": {}}]}],
            "block type 'document'",
        ),
        (from_anthropic, [{"role": "system", "content": "x"}], "not an Anthropic role"),
    ],
)
def test_what_cannot_be_converted_is_an_error_naming_it(
    convert: Callable[[list[dict[str, Any]]], Any], dicts: list[dict[str, Any]], error: str
) -> None:
    with pytest.raises(ValueError, match=error):
        convert(dicts)


def test_agent_invisible_messages_are_not_converted() -> None:
    hidden = Message.user("old").with_agent_invisible()
    assert to_openai_chat([hidden, Message.user("new")]) == [{"role": "user", "content": "new"}]
