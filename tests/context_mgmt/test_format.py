"""How messages read to the summarizer (reference §4.3) and the file lists (§4.7)."""

from __future__ import annotations

from context_mgmt import extract_file_history, format_message_for_compacting
from conversation import (
    ImageContent,
    Message,
    RedactedThinkingContent,
    SystemNotification,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
)


def test_text_and_role_prefix() -> None:
    assert format_message_for_compacting(Message.user("fix it\nplease")) == (
        "[user]: fix it\nplease"
    )
    assert format_message_for_compacting(Message.assistant("done")) == "[assistant]: done"


def test_thinking_is_left_out() -> None:
    message = Message.assistant(
        None,
        ThinkingContent(thinking="secret plan", signature="sig"),
        RedactedThinkingContent(data="opaque"),
        TextContent(text="the answer"),
    )
    text = format_message_for_compacting(message)
    assert text == "[assistant]: the answer"
    assert "secret plan" not in text


def test_empty_and_thinking_only_messages() -> None:
    assert format_message_for_compacting(Message(role="user")) == "[user]: <empty message>"
    thinking_only = Message.assistant(None, ThinkingContent(thinking="hmm"))
    assert format_message_for_compacting(thinking_only) == "[assistant]: <empty message>"


def test_tool_traffic() -> None:
    request = Message.assistant(
        "Reading it.",
        ToolRequest(id="a", name="read_file", arguments={"path": "src/x.py", "n": 2}),
        ToolRequest(id="b", name="shell", arguments={"bad": 1}, error="arguments were not JSON"),
    )
    assert format_message_for_compacting(request) == (
        "[assistant]: Reading it.\n"
        'tool_request(read_file): {"path": "src/x.py", "n": 2}\n'
        "tool_request(shell): [invalid call] arguments were not JSON"
    )
    response = Message.user(
        None,
        ToolResponse(id="a", content=(TextContent(text="line 1"), TextContent(text="line 2"))),
        ToolResponse(id="b", content=(TextContent(text="No such file: x"),), is_error=True),
        ToolResponse(id="c", content=(ImageContent(data="AAAA", mime_type="image/jpeg"),)),
        ToolResponse(id="d"),
    )
    assert format_message_for_compacting(response) == (
        "[user]: tool_response: line 1\nline 2\n"
        "tool_response: [error] No such file: x\n"
        "tool_response: [image: image/jpeg]\n"
        "tool_response: [no content]"
    )


def test_images_and_notifications() -> None:
    message = Message.user(
        "look",
        ImageContent(data="AAAA", mime_type="image/png"),
        SystemNotification(msg="Compaction complete"),
    )
    assert format_message_for_compacting(message) == (
        "[user]: look\n[image: image/png]\nsystem_notification: Compaction complete"
    )


def test_file_history_from_tool_requests() -> None:
    messages = [
        Message.assistant(
            None,
            ToolRequest(id="1", name="read_file", arguments={"path": "a.py"}),
            ToolRequest(id="2", name="developer__edit", arguments={"path": "b.py"}),
            ToolRequest(id="3", name="view", arguments={"path": "a.py"}),
            ToolRequest(id="4", name="text_editor", arguments={"command": "view", "path": "c.py"}),
            ToolRequest(id="5", name="text_editor", arguments={"command": "write", "path": "d"}),
            ToolRequest(id="6", name="read", arguments={"path": "b.py"}),
            ToolRequest(id="7", name="shell", arguments={"path": "e.py"}),
            ToolRequest(id="8", name="write_file", arguments={"file_path": "f.py"}),
            ToolRequest(id="9", name="read_file", arguments={"path": 3}),
        )
    ]
    reads, writes = extract_file_history(messages)
    assert reads == ["a.py", "c.py"]
    assert writes == ["b.py", "d", "f.py"]
