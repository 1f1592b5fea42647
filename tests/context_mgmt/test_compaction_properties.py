"""Property: whatever valid conversation is compacted, the agent view that results is one
`fix_conversation` leaves untouched, alone and with the next step of the session after it."""

from __future__ import annotations

import asyncio
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gosling.context_mgmt import compact_messages
from gosling.conversation import (
    Content,
    ImageContent,
    Message,
    MessageMetadata,
    SystemNotification,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
    fix_agent_view,
    fix_conversation,
)
from gosling.providers import ScriptedProvider

from .builders import STRUCTURED_REPLY

words = st.text(alphabet="abc xyz\n{}`", min_size=1, max_size=20).filter(lambda s: s.strip())
IMAGE = ImageContent(data="AAAA", mime_type="image/png")


@st.composite
def user_turn(draw: st.DrawFn) -> Message:
    kind = draw(st.sampled_from(["text", "text+image", "image"]))
    parts: list[Content] = []
    if kind != "image":
        parts.append(TextContent(text=draw(words)))
    if kind != "text":
        parts.append(IMAGE)
    return Message(role="user", content=tuple(parts))


@st.composite
def tool_round(draw: st.DrawFn, ids: st.SearchStrategy[str]) -> list[Message]:
    call_ids = draw(st.lists(ids, min_size=1, max_size=3, unique=True))
    parts: list[Content] = []
    if draw(st.booleans()):
        parts.append(ThinkingContent(thinking=draw(words), signature="sig"))
    if draw(st.booleans()):
        parts.append(TextContent(text=draw(words).rstrip() or "ok"))
    parts.extend(ToolRequest(id=i, name="read_file", arguments={"path": i}) for i in call_ids)
    responses = []
    for i in call_ids:
        output = draw(st.sampled_from(["text", "image", "error"]))
        content = (IMAGE,) if output == "image" else (TextContent(text=draw(words)),)
        responses.append(ToolResponse(id=i, content=content, is_error=output == "error"))
    return [
        Message(role="assistant", content=tuple(parts)),
        Message(role="user", content=tuple(responses)),
    ]


def _hidden(draw: st.DrawFn) -> Message:
    choice = draw(st.sampled_from(["notification", "invisible", "user_only_text"]))
    if choice == "notification":
        return Message(
            role="user",
            content=(SystemNotification(msg="Compacting..."),),
            metadata=MessageMetadata.user_only(),
        )
    if choice == "invisible":
        return Message.assistant(draw(words)).with_visibility(user=False, agent=False)
    return Message.user(draw(words)).user_only()


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    counter = iter(range(10_000))
    ids = st.builds(lambda: f"call_{next(counter)}")
    messages: list[Message] = []
    for _ in range(draw(st.integers(1, 4))):
        if messages and messages[-1].effective_role == "user":
            messages.append(Message.assistant("noted"))
        messages.append(draw(user_turn()))
        for _ in range(draw(st.integers(0, 3))):
            messages.extend(draw(tool_round(ids)))
        if draw(st.booleans()):
            messages.append(Message.assistant(draw(words).rstrip() or "done"))
    for _ in range(draw(st.integers(0, 3))):
        messages.insert(draw(st.integers(0, len(messages))), _hidden(draw))
    return messages


summaries = st.sampled_from(
    [
        STRUCTURED_REPLY,
        "Plain prose summary: the user is fixing things.",
        "```json\n" + json.dumps({"current_work": "x", "files": ["a.py"]}) + "\n```",
    ]
)


def _assert_unchanged_by_fix(messages: list[Message]) -> None:
    fixed, issues = fix_conversation(messages)
    assert issues == []
    assert fixed == messages


def _next_tool_step() -> list[Message]:
    return [
        Message.assistant(None, ToolRequest(id="after", name="shell", arguments={})),
        Message.user(None, ToolResponse(id="after", content=(TextContent(text="ok"),))),
    ]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.booleans(), summaries, st.booleans())
def test_compaction_always_leaves_a_valid_agent_view(
    messages: list[Message], manual: bool, reply: str, twice: bool
) -> None:
    _, issues = fix_agent_view(messages)
    assert set(issues) <= {"Removed trailing assistant message"}, "generator builds valid input"

    async def run() -> list[Message]:
        provider = ScriptedProvider([reply, reply])
        result = await compact_messages(provider, messages, manual=manual)
        compacted = list(result.messages)
        # Everything the agent saw is now hidden from it; nothing the user saw is hidden.
        for before, after in zip(messages, compacted, strict=False):
            assert after.id == before.id and after.content == before.content
            assert after.metadata.user_visible == before.metadata.user_visible
            assert not after.metadata.agent_visible
        assert set(result.hidden_ids) == {m.id for m in messages if m.metadata.agent_visible}
        if twice:
            follow_up = [*compacted, Message.user("and then?")] if manual else compacted
            again = await compact_messages(provider, follow_up)
            compacted = list(again.messages)
            manual_last = False
        else:
            manual_last = manual
        if manual_last:
            compacted.append(Message.user("next question"))
        return compacted

    compacted = asyncio.run(run())
    _assert_unchanged_by_fix(compacted)
    _assert_unchanged_by_fix([*compacted, *_next_tool_step()])
