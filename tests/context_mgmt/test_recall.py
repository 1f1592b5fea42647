"""Recall: the original of any masked or summarized tool result comes back, by call id, from
the session; and the `context__recall` tool the model calls for it."""

from __future__ import annotations

from pathlib import Path

from gosling.agent.tools.base import NAME_SEPARATOR, ToolContext
from gosling.agent.tools.manager import ExtensionManager
from gosling.agent.tools.recall import context_extension, recall_tool
from gosling.context_mgmt.masking import messages_to_mask
from gosling.context_mgmt.recall import RECALL_TOOL_NAME, recall, recall_hint, recall_tool_output
from gosling.conversation import ImageContent, Message, TextContent, ToolRequest, ToolResponse
from tests.context_mgmt.tool_conversations import (
    answers,
    applied,
    asks,
    big_output,
    call,
    mark_masked,
    notes_for,
    output,
    session,
    shown,
)


def test_a_summarized_pairs_output_comes_back_from_the_hidden_originals() -> None:
    messages, _ = applied(session(12), notes_for(["call_0"]))
    assert all(not m.metadata.agent_visible for m in messages[1:3])
    text = recall_tool_output(messages, "call_0")
    assert text.startswith('Original output of developer__shell {"command": "cmd call_0"}')
    assert big_output("call_0") in text
    assert "(tool call call_0)" in text


def test_a_masked_output_comes_back_while_the_view_shows_a_placeholder() -> None:
    plain = session(30)
    messages = mark_masked(plain, messages_to_mask(plain, 10, 10))
    text = shown(messages)[2].tool_responses[0].text()
    assert recall_hint("call_0") in text and big_output("call_0") not in text
    assert big_output("call_0") in recall_tool_output(messages, "call_0")


def test_errors_are_marked_and_unknown_ids_explained() -> None:
    messages = [
        Message.user("go"),
        asks(call("bad")),
        answers(output("bad", "permission denied", is_error=True)),
    ]
    found = recall(messages, "bad")
    assert found.found and found.is_error
    assert found.text.startswith("Original error output of developer__shell")
    assert "permission denied" in found.text

    missing = recall(messages, "call_zzz")
    assert not missing.found
    assert "No tool call with id 'call_zzz'" in missing.text
    assert RECALL_TOOL_NAME in missing.text


def test_a_call_without_a_result_says_so() -> None:
    messages = [Message.user("go"), asks(call("pending"))]
    found = recall(messages, "pending")
    assert not found.found and "has no result" in found.text


def test_a_huge_output_is_cut_to_the_limit() -> None:
    messages = [Message.user("go"), asks(call("big")), answers(output("big", "z" * 10_000))]
    text = recall_tool_output(messages, "big", max_chars=1_000)
    assert "9,000 more characters not shown" in text
    assert len(text) < 1_300
    assert "z" * 10_000 in recall_tool_output(messages, "big", max_chars=None)


# -- the tool ---------------------------------------------------------------------------------


def context_for(messages: list[Message] | None, tmp_path: Path) -> ToolContext:
    if messages is None:
        return ToolContext(working_dir=tmp_path)
    return ToolContext(working_dir=tmp_path, session_messages=lambda: messages)


def test_the_tool_is_exposed_under_the_name_placeholders_use() -> None:
    extension = context_extension()
    [only] = extension.tools()
    assert f"{extension.name}{NAME_SEPARATOR}{only.name}" == RECALL_TOOL_NAME
    assert only.annotations.read_only
    assert only.input_schema["required"] == ["id"]
    assert extension.instructions and "recall" in extension.instructions


async def test_the_tool_returns_the_original_through_the_manager(tmp_path: Path) -> None:
    messages, _ = applied(session(12), notes_for(["call_0"]))
    manager = ExtensionManager([context_extension()])
    request = ToolRequest(id="r1", name=RECALL_TOOL_NAME, arguments={"id": "call_0"})
    response = await manager.respond(request, context_for(messages, tmp_path))
    assert not response.is_error
    assert big_output("call_0") in response.text()


async def test_the_tool_reports_unknown_ids_and_missing_sessions(tmp_path: Path) -> None:
    tool = recall_tool()
    unknown = await tool.call({"id": "nope"}, context_for(session(2), tmp_path))
    assert unknown.is_error and "No tool call with id 'nope'" in unknown.text_content()
    no_session = await tool.call({"id": "call_0"}, context_for(None, tmp_path))
    assert no_session.is_error and "needs a session" in no_session.text_content()
    bad_arguments = await tool.call({}, context_for(session(2), tmp_path))
    assert bad_arguments.is_error and "id" in bad_arguments.text_content()


async def test_images_come_back_as_images(tmp_path: Path) -> None:
    image = ImageContent(data="iVBORw0KGgo=", mime_type="image/png")
    shot = ToolResponse(id="shot", content=(TextContent(text="the page"), image))
    messages = [Message.user("look"), asks(call("shot", name="browser__screenshot")), answers(shot)]
    result = await recall_tool().call({"id": "shot"}, context_for(messages, tmp_path))
    assert not result.is_error
    assert result.content[-1] == image
    assert "1 image attached" in result.text_content()
