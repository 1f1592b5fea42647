"""The repair pipeline of reference §1.4, as the model would receive the result."""

from __future__ import annotations

from gosling.conversation import (
    Message,
    MessageMetadata,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
    fix_conversation,
    is_valid_agent_view,
)


def call(id_: str, name: str = "shell") -> ToolRequest:
    return ToolRequest(id=id_, name=name, arguments={"command": "ls"})


def result(id_: str, text: str = "ok") -> ToolResponse:
    return ToolResponse(id=id_, content=(TextContent(text=text),))


def texts(messages: list[Message]) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in messages]


def test_valid_conversation_is_untouched() -> None:
    msgs = [
        Message.user("list files"),
        Message.assistant("sure", call("1")),
        Message.user(None, result("1")),
        Message.assistant("done"),
        Message.user("thanks"),
    ]
    fixed, issues = fix_conversation(msgs)
    assert issues == []
    assert fixed == msgs
    assert is_valid_agent_view(msgs)


def test_orphaned_tool_request_is_removed() -> None:
    msgs = [Message.user("go"), Message.assistant("trying", call("a")), Message.user("next")]
    fixed, issues = fix_conversation(msgs)
    assert "Removed orphaned tool request 'a'" in issues
    assert all(not m.tool_requests for m in fixed)
    assert texts(fixed) == [("user", "go"), ("assistant", "trying"), ("user", "next")]


def test_orphaned_tool_response_is_removed() -> None:
    msgs = [Message.user("go"), Message.assistant("hi"), Message.user("more", result("zzz"))]
    fixed, issues = fix_conversation(msgs)
    assert "Removed orphaned tool response 'zzz'" in issues
    assert all(not m.tool_responses for m in fixed)
    assert fixed[-1].text == "more"


def test_tool_parts_on_the_wrong_side_are_removed() -> None:
    msgs = [
        Message.user("go", call("u"), ThinkingContent(thinking="hmm")),
        Message.assistant("x", result("r")),
        Message.user("y"),
    ]
    _, issues = fix_conversation(msgs)
    assert "Removed tool request 'u' from user message" in issues
    assert "Removed thinking content from user message" in issues
    assert "Removed tool response 'r' from assistant message" in issues


def test_consecutive_messages_merge_by_effective_role() -> None:
    msgs = [Message.user("a"), Message.user("b"), Message.assistant("c"), Message.assistant("d")]
    msgs.append(Message.user("e"))
    fixed, issues = fix_conversation(msgs)
    assert issues.count("Merged consecutive user messages") == 1
    assert issues.count("Merged consecutive assistant messages") == 1
    assert [m.role for m in fixed] == ["user", "assistant", "user"]
    assert fixed[0].text == "a\nb"
    # assistant texts are merged without a separator once adjacent
    assert fixed[1].text == "cd"
    assert "Merged text content" in issues


def test_tool_message_is_not_merged_into_a_user_message() -> None:
    msgs = [
        Message.user("go"),
        Message.assistant(None, call("1")),
        Message.user(None, result("1")),
        Message.user("and then?"),
    ]
    fixed, issues = fix_conversation(msgs)
    assert issues == []
    assert [m.effective_role for m in fixed] == ["user", "assistant", "tool", "user"]


def test_leading_and_trailing_assistant_are_dropped() -> None:
    msgs = [Message.assistant("hello"), Message.user("hi"), Message.assistant("bye")]
    fixed, issues = fix_conversation(msgs)
    assert issues == ["Removed leading assistant message", "Removed trailing assistant message"]
    assert texts(fixed) == [("user", "hi")]


def test_dropping_a_leading_tool_call_also_drops_its_results() -> None:
    msgs = [Message.assistant(None, call("1")), Message.user(None, result("1")), Message.user("q")]
    fixed, issues = fix_conversation(msgs)
    assert texts(fixed) == [("user", "q")]
    assert fix_conversation(fixed)[1] == []
    assert issues


def test_empty_conversation_gets_a_placeholder() -> None:
    fixed, issues = fix_conversation([Message.assistant("   ")])
    assert texts(fixed) == [("user", "Hello")]
    assert "Added placeholder user message to empty conversation" in issues


def test_empty_tool_result_gets_a_placeholder() -> None:
    empty = ToolResponse(id="1", content=())
    msgs = [Message.user("go"), Message.assistant(None, call("1")), Message.user(None, empty)]
    fixed, issues = fix_conversation(msgs)
    assert issues == ["Added placeholder to empty tool result '1'"]
    assert fixed[2].tool_responses[0].text() == "(empty result)"


def test_assistant_whitespace_trimmed_and_empty_messages_removed() -> None:
    msgs = [Message.user("go"), Message.assistant("answer \n\n"), Message.user("")]
    msgs.append(Message.user("next"))
    fixed, issues = fix_conversation(msgs)
    assert "Trimmed trailing whitespace from assistant message" in issues
    assert "Removed empty message" in issues
    assert texts(fixed) == [("user", "go"), ("assistant", "answer"), ("user", "next")]


def test_invisible_messages_keep_their_relative_order() -> None:
    hidden_a = Message.user("old question").with_metadata(MessageMetadata.user_only())
    hidden_b = Message.assistant("old answer").with_metadata(MessageMetadata.invisible())
    msgs = [
        hidden_a,
        Message.user("a"),
        hidden_b,
        Message.user("b"),
        Message.assistant("c"),
        Message.user("d"),
    ]
    fixed, issues = fix_conversation(msgs)
    assert issues == ["Merged consecutive user messages"]
    assert fixed[0] is hidden_a
    assert fixed[2] is hidden_b
    assert [m.text for m in fixed if m.is_agent_visible] == ["a\nb", "c", "d"]
    assert fixed.index(hidden_a) < fixed.index(hidden_b)


def test_fixing_a_fixed_conversation_reports_nothing() -> None:
    messy = [
        Message.assistant("lead"),
        Message.user("x", result("nope")),
        Message.user("y"),
        Message.assistant("a", call("1"), call("2")),
        Message.user(None, result("1")),
        Message.assistant("tail  "),
    ]
    fixed, issues = fix_conversation(messy)
    assert issues
    again, more = fix_conversation(fixed)
    assert more == []
    assert again == fixed
    assert is_valid_agent_view([m for m in fixed if m.is_agent_visible])


def test_user_text_between_a_call_and_its_result_moves_after_the_result() -> None:
    msgs = [
        Message.user("go"),
        Message.assistant(None, call("c")),
        Message.user("hurry up"),
        Message.user(None, result("c")),
    ]
    fixed, issues = fix_conversation(msgs)
    assert "Moved tool responses ahead of user content" in issues
    assert [m.effective_role for m in fixed] == ["user", "assistant", "tool", "user"]
    assert fixed[2].tool_responses[0].id == "c"
    assert fixed[3].text == "hurry up"
    assert fix_conversation(fixed)[1] == []


def test_result_answering_an_earlier_turn_is_an_orphan() -> None:
    msgs = [
        Message.user("go"),
        Message.assistant("a", call("c")),
        Message.user("wait"),
        Message.assistant("b"),
        Message.user(None, result("c")),
    ]
    fixed, issues = fix_conversation(msgs)
    assert "Removed orphaned tool response 'c'" in issues
    assert "Removed orphaned tool request 'c'" in issues
    assert is_valid_agent_view(fixed)


def test_an_id_reused_across_turns_does_not_answer_a_later_call() -> None:
    """Servers that number calls per reply send `call_0` every turn; a session killed after
    the second `call_0` was stored but before its result must not send that call unanswered."""
    msgs = [
        Message.user("go"),
        Message.assistant("first", call("call_0")),
        Message.user(None, result("call_0")),
        Message.assistant("second", call("call_0")),
        Message.user("resumed: carry on"),
    ]
    fixed, issues = fix_conversation(msgs)
    assert "Removed orphaned tool request 'call_0'" in issues
    assert is_valid_agent_view(fixed)
    assert [len(m.tool_requests) for m in fixed] == [0, 1, 0, 0, 0]
    assert fixed[2].tool_responses[0].id == "call_0"
