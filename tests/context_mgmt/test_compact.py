"""`compact_messages`: the compacted layout, visibility flags and the agent view for
automatic, tool-loop and manual compaction (reference §3)."""

from __future__ import annotations

import pytest

from gosling.context_mgmt import (
    CONTINUATION_TEXTS,
    CompactionFailed,
    CompactionTemplates,
    compact_messages,
)
from gosling.context_mgmt.tokens import default_counter
from gosling.conversation import (
    ImageContent,
    Message,
    MessageMetadata,
    SystemNotification,
    fix_agent_view,
    fix_conversation,
)
from gosling.providers import ScriptedProvider, ScriptedReply, Usage

from .builders import STRUCTURED_REPLY, always_overflow, calls, results

SUMMARY_ONLY_NOTE = CONTINUATION_TEXTS["summary_only"]


def _provider() -> ScriptedProvider:
    return ScriptedProvider([ScriptedReply(text=STRUCTURED_REPLY, usage=Usage(output_tokens=40))])


def _assert_valid(messages: list[Message]) -> None:
    fixed, issues = fix_conversation(messages)
    assert issues == []
    assert fixed == messages


def _layout(messages: tuple[Message, ...]) -> list[tuple[str, str | None, bool, bool]]:
    return [
        (m.role, m.metadata.kind, m.metadata.user_visible, m.metadata.agent_visible)
        for m in messages
    ]


async def test_automatic_compaction_between_turns() -> None:
    original = [
        Message.user("Fix the parser bug"),
        Message.assistant("Done: the scan loop was off by one."),
        Message.user("Now add a regression test"),
    ]
    result = await compact_messages(_provider(), original)

    assert _layout(result.messages) == [
        ("user", None, True, False),
        ("assistant", None, True, False),
        ("user", None, True, False),
        ("user", "summary", False, True),
        ("assistant", "continuation", False, True),
        ("user", "preserved_user", False, True),
    ]
    summary, continuation, preserved = result.appended
    assert summary.text.startswith("# Conversation Summary")
    assert summary.metadata.source_ids == tuple(m.id for m in original)
    assert result.hidden_ids == tuple(m.id for m in original)
    assert continuation.text == CONTINUATION_TEXTS["conversation"]
    assert result.mode == "conversation"
    assert preserved.text == "Now add a regression test"
    assert preserved.id != original[2].id
    # Originals keep their identity and content; only the flag changed.
    assert [(m.id, m.content) for m in result.messages[:3]] == [(m.id, m.content) for m in original]
    _assert_valid(list(result.messages))


async def test_the_ui_sees_exactly_what_it_saw_before() -> None:
    original = [Message.user("question"), Message.assistant("answer"), Message.user("more")]
    result = await compact_messages(_provider(), original)
    assert [m for m in result.messages if m.metadata.user_visible] == [
        m.with_agent_invisible() for m in original
    ]


async def test_compaction_inside_a_tool_loop() -> None:
    original = [
        Message.user("Fix the parser bug"),
        calls("c1", path="src/parser.py"),
        results(("c1", "def scan(): ...")),
        calls("c2", "c3", path="tests/test_parser.py"),
        results(("c2", "ok"), ("c3", "ok")),
    ]
    result = await compact_messages(_provider(), original)

    assert result.mode == "tool_loop"
    view = result.agent_view
    assert [(m.role, m.metadata.kind) for m in view] == [
        ("user", "summary"),
        ("assistant", "continuation"),
        ("user", "preserved_user"),
    ]
    assert view[1].text == CONTINUATION_TEXTS["tool_loop"]
    assert view[2].text == "Fix the parser bug"
    _assert_valid(list(result.messages))

    # The loop goes on: the next tool call and its result follow validly.
    following = [*result.messages, calls("c4", path="README.md"), results(("c4", "# Readme"))]
    _assert_valid(following)
    fixed_view, issues = fix_agent_view(following)
    assert issues == [] and fixed_view[-2].tool_requests[0].id == "c4"


@pytest.mark.parametrize(
    "after",
    [
        Message.user("/model fast").user_only(),
        Message.user("### Subdirectory Hints (src)\nuse tabs").agent_only().with_kind("hints"),
        Message.user(None, SystemNotification(msg="Context limit reached")).user_only(),
    ],
    ids=["user-only command", "agent-only hints", "notification"],
)
async def test_anything_after_the_last_user_text_means_the_tool_loop_text(after: Message) -> None:
    """goose's rule (§3.1 step 6): the conversation continuation only when the user's latest
    words are the very last message, whatever follows them otherwise."""
    original = [Message.user("Fix the parser bug"), Message.assistant("On it."), after]
    original.insert(2, Message.user("and add a test"))
    result = await compact_messages(_provider(), original)
    assert result.mode == "tool_loop"
    assert result.agent_view[1].text == CONTINUATION_TEXTS["tool_loop"]
    assert result.agent_view[-1].text == "and add a test"
    _assert_valid(list(result.messages))


async def test_prompts_passed_from_code_are_used_by_compaction() -> None:
    provider = _provider()
    templates = CompactionTemplates(
        compaction="Condense:\n{{ messages }}", summary="NOTES {{ user_intent[0] }}"
    )
    result = await compact_messages(provider, [Message.user("hi")], templates=templates)
    assert provider.requests[0].system == 'Condense:\n{"role":"user","content":["hi"]}'
    assert result.appended[0].text.startswith("NOTES ")


async def test_manual_compaction_with_focus() -> None:
    original = [
        Message.user("Design the API"),
        Message.assistant("We chose REST with cursor pagination."),
    ]
    provider = _provider()
    result = await compact_messages(provider, original, manual=True, focus="keep the API decisions")

    assert "<focus>\nkeep the API decisions\n</focus>" in provider.requests[0].system
    assert result.mode == "manual"
    assert _layout(result.appended) == [
        ("user", "summary", False, True),
        ("assistant", "continuation", False, True),
    ]
    assert result.appended[1].text == CONTINUATION_TEXTS["manual"]
    # A manual compaction sits between turns: the user's next message completes the view.
    _assert_valid([*result.messages, Message.user("Now write the client")])


async def test_without_user_text_the_note_joins_the_summary() -> None:
    original = [
        Message.user(None, ImageContent(data="AAAA")),
        calls("c1", path="shot.png"),
        results(("c1", "a screenshot of a stack trace")),
    ]
    result = await compact_messages(_provider(), original)
    (summary,) = result.appended
    assert summary.content[-1].text == SUMMARY_ONLY_NOTE  # type: ignore[union-attr]
    _assert_valid(list(result.messages))
    _assert_valid([*result.messages, calls("c2"), results(("c2", "done"))])


async def test_the_latest_user_words_are_kept_with_images_but_not_synthetic_messages() -> None:
    hints = Message.user("### Subdirectory hints\nUse tabs.").agent_only().with_kind("hints")
    original = [
        Message.user("Look at this", ImageContent(data="AAAA", mime_type="image/jpeg")),
        calls("c1"),
        results(("c1", "ok")),
        hints,
    ]
    result = await compact_messages(_provider(), original)
    preserved = result.appended[-1]
    assert preserved.metadata.kind == "preserved_user"
    assert preserved.text == "Look at this"
    assert any(isinstance(p, ImageContent) for p in preserved.content)


async def test_invisible_messages_stay_as_they_were() -> None:
    notice = Message(
        role="user",
        content=(SystemNotification(msg="Compaction complete"),),
        metadata=MessageMetadata.user_only(),
    )
    gone = Message.user("old and hidden").with_visibility(user=False, agent=False)
    original = [gone, Message.user("hello"), notice, Message.assistant("hi"), Message.user("go")]
    result = await compact_messages(_provider(), original)
    assert result.messages[0] == gone
    assert result.messages[2] == notice
    assert gone.id not in result.hidden_ids and notice.id not in result.hidden_ids


async def test_compacting_twice_summarizes_the_previous_summary() -> None:
    first = await compact_messages(_provider(), [Message.user("a"), Message.assistant("b")])
    second_turn = [*first.messages, Message.user("c")]
    provider = _provider()
    second = await compact_messages(provider, second_turn)

    old_summary = second.messages[2]
    assert old_summary.metadata.kind == "summary"
    assert not old_summary.metadata.user_visible and not old_summary.metadata.agent_visible
    assert "# Conversation Summary" in provider.requests[0].system
    assert second.appended[-1].text == "c"
    _assert_valid(list(second.messages))


async def test_usage_and_retained_tokens() -> None:
    original = [Message.user("x " * 2000), Message.assistant("y " * 2000), Message.user("next")]
    result = await compact_messages(_provider(), original)
    counter = default_counter()
    assert result.usage.output_tokens == 40
    assert result.retained_tokens == counter.count_chat("", result.agent_view)
    assert result.retained_tokens < counter.count_chat("", original) // 5
    # The baseline is the retained context, not the summarizer's raw output.
    assert result.retained_tokens != result.usage.output_tokens


async def test_new_messages_sort_after_the_originals() -> None:
    future = Message.user("from a skewed clock").model_copy(update={"created": 4_000_000_000})
    result = await compact_messages(_provider(), [future])
    assert all(m.created >= future.created for m in result.appended)


async def test_a_failed_compaction_raises_and_changes_nothing() -> None:
    original = [Message.user("q"), Message.assistant("a"), Message.user("next")]
    snapshot = list(original)
    with pytest.raises(CompactionFailed):
        await compact_messages(ScriptedProvider([always_overflow]), original)
    assert original == snapshot


def test_continuation_texts_acknowledge_the_summary() -> None:
    for text in [*CONTINUATION_TEXTS.values(), SUMMARY_ONLY_NOTE]:
        lowered = text.lower()
        assert "summary" in lowered
        assert "only memory" in lowered
        assert "authoritative" in lowered
        assert "instead of guess" in lowered or "rather than guess" in lowered
        assert "do not mention" not in lowered
    assert "run the tool again" in CONTINUATION_TEXTS["tool_loop"]
    assert "user's request" in CONTINUATION_TEXTS["manual"]


async def test_continuation_texts_come_from_the_callers_template() -> None:
    template = "{% if mode == 'summary_only' %}NOTE{% else %}GO ON ({{ mode }}){% endif %}"
    templates = CompactionTemplates(continuation=template)
    provider = ScriptedProvider([ScriptedReply(text='{"current_work": "w"}')])
    result = await compact_messages(
        provider,
        [Message.user("hi"), Message.assistant("hello"), Message.user("go")],
        templates=templates,
    )
    assert [m.text for m in result.appended][1:] == ["GO ON (conversation)", "go"]
    provider = ScriptedProvider([ScriptedReply(text='{"current_work": "w"}')])
    result = await compact_messages(provider, [Message.assistant("x")], templates=templates)
    assert result.appended[0].content[-1].text == "NOTE"  # type: ignore[union-attr]
