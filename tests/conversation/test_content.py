"""Every content type survives a JSON round trip; visibility helpers flip single flags."""

from __future__ import annotations

import pytest

from gosling.conversation import (
    Content,
    ImageContent,
    Message,
    MessageMetadata,
    RedactedThinkingContent,
    SystemNotification,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
)

PARTS: list[Content] = [
    TextContent(text="héllo 世界 🎉"),
    ImageContent(data="aGVsbG8=", mime_type="image/jpeg"),
    ToolRequest(id="t1", name="developer__shell", arguments={"command": "ls", "n": [1, 2]}),
    ToolRequest(id="t2", name="broken", error="arguments were not valid JSON"),
    ToolResponse(
        id="t1", content=(TextContent(text="a\nb"), ImageContent(data="eA==")), is_error=True
    ),
    ThinkingContent(thinking="let me think", signature="sig"),
    RedactedThinkingContent(data="opaque"),
    SystemNotification(notification_type="thinking", msg="compacting"),
]


@pytest.mark.parametrize("part", PARTS, ids=lambda p: p.type)
def test_json_round_trip_of_every_content_type(part: Content) -> None:
    message = Message(role="assistant", content=(part,), metadata=MessageMetadata.agent_only())
    dumped = message.model_dump_json()
    again = Message.model_validate_json(dumped)
    assert again == message
    assert again.model_dump_json() == dumped


def test_unicode_tag_characters_are_stripped_on_load_too() -> None:
    assert TextContent(text="Hello\U000e0041\U000e0042\U000e0043world").text == "Helloworld"
    raw = '{"role":"user","content":[{"type":"text","text":"a\U000e0041b 你好"}]}'
    assert Message.model_validate_json(raw).text == "ab 你好"


def test_non_object_tool_arguments_are_coerced() -> None:
    assert ToolRequest.model_validate({"id": "1", "name": "x", "arguments": "ls"}).arguments == {
        "value": "ls"
    }
    assert ToolRequest.model_validate({"id": "1", "name": "x", "arguments": None}).arguments == {}


def test_visibility_constructors_and_single_flag_updates() -> None:
    assert (
        MessageMetadata.agent_only().user_visible,
        MessageMetadata.agent_only().agent_visible,
    ) == (False, True)
    assert (
        MessageMetadata.user_only().user_visible,
        MessageMetadata.user_only().agent_visible,
    ) == (True, False)
    invisible = MessageMetadata.invisible()
    assert not invisible.user_visible and not invisible.agent_visible
    summary = MessageMetadata.agent_only().with_agent_invisible()
    assert (summary.user_visible, summary.agent_visible) == (False, False)
    shown = MessageMetadata.user_only().with_agent_visible()
    assert (shown.user_visible, shown.agent_visible) == (True, True)


def test_copies_share_parts_and_keep_identity() -> None:
    original = Message.user("hi")
    hidden = original.with_agent_invisible()
    assert hidden.id == original.id and hidden.content is original.content
    assert original.is_agent_visible and not hidden.is_agent_visible


def test_effective_role() -> None:
    assert Message.user(None, ToolResponse(id="1")).effective_role == "tool"
    assert Message.user("x").effective_role == "user"
    assert Message.assistant("x").effective_role == "assistant"
