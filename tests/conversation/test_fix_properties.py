"""Property: whatever goes in, the fixed agent view is valid and fixing it again is a no-op."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

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

ids = st.sampled_from(["a", "b", "c", "d"])
parts = st.one_of(
    st.builds(TextContent, text=st.sampled_from(["", " ", "hi", "x  ", "done\n"])),
    st.builds(ToolRequest, id=ids, name=st.just("shell")),
    st.builds(ToolResponse, id=ids, content=st.sampled_from([(), (TextContent(text="out"),)])),
    st.builds(ThinkingContent, thinking=st.just("hmm")),
)
metadata = st.sampled_from(
    [
        MessageMetadata(),
        MessageMetadata.agent_only(),
        MessageMetadata.user_only(),
        MessageMetadata.invisible(),
    ]
)
messages = st.builds(
    lambda role, content, meta: Message(role=role, content=tuple(content), metadata=meta),
    st.sampled_from(["user", "assistant"]),
    st.lists(parts, max_size=4),
    metadata,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(messages, max_size=10))
def test_fixed_view_is_valid_and_stable(conversation: list[Message]) -> None:
    fixed, _ = fix_conversation(conversation)
    view = [m for m in fixed if m.is_agent_visible]
    assert is_valid_agent_view(view)
    again, issues = fix_conversation(fixed)
    assert issues == []
    assert again == fixed
    hidden_before = [m for m in conversation if not m.is_agent_visible]
    hidden_after = [m for m in fixed if not m.is_agent_visible]
    assert hidden_after == hidden_before


@settings(max_examples=300, deadline=None)
@given(st.lists(messages, max_size=8))
def test_views_judged_valid_need_no_repair_from_any_processor(conversation: list[Message]) -> None:
    from gosling.conversation.fix import PROCESSORS

    view = [m for m in fix_conversation(conversation)[0] if m.is_agent_visible]
    assert is_valid_agent_view(view)
    for processor in PROCESSORS:
        view, issues = processor(view)
        assert issues == []


tiny_ids = st.sampled_from(["call_0", "call_1"])


@st.composite
def killed_sessions(draw: st.DrawFn) -> list[Message]:
    """Sessions as a killed and resumed run leaves them: tool rounds whose ids repeat across
    turns (servers that number calls per reply), each cut short at a random point."""
    out: list[Message] = [Message.user("task")]
    for _ in range(draw(st.integers(1, 5))):
        calls = draw(st.lists(tiny_ids, min_size=1, max_size=2, unique=True))
        out.append(Message.assistant("step", *(ToolRequest(id=i, name="shell") for i in calls)))
        answered = draw(st.lists(st.sampled_from(calls), unique=True))
        if answered:
            results = (ToolResponse(id=i, content=(TextContent(text="out"),)) for i in answered)
            out.append(Message.user(None, *results))
        if draw(st.booleans()):
            out.append(Message.user("resumed"))
    return out


@settings(max_examples=300, deadline=None)
@given(killed_sessions())
def test_reused_ids_never_leave_a_call_unanswered(conversation: list[Message]) -> None:
    fixed, _ = fix_conversation(conversation)
    assert is_valid_agent_view(fixed)
    kept = sum(len(m.tool_requests) for m in fixed)
    complete = 0  # calls whose result follows in the same round: nothing may drop those
    for i, message in enumerate(conversation[:-1]):
        answers = {r.id for r in conversation[i + 1].tool_responses}
        complete += sum(r.id in answers for r in message.tool_requests)
    assert kept == complete
