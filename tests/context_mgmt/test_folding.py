"""Folding: old masked calls leave the view behind one note of bounded size, and every one
of them stays recallable."""

from __future__ import annotations

from gosling.context_mgmt.folding import FOLD_NOTE_HEADER, LISTED_CALLS, fold_calls
from gosling.context_mgmt.recall import recall
from gosling.context_mgmt.tool_pairs import TOOL_SUMMARY_KIND
from gosling.conversation import Message, fix_conversation
from tests.context_mgmt.tool_conversations import (
    answers,
    asks,
    call,
    mark_masked,
    output,
    session,
    tool_loop,
    visible,
)


def masked_results(messages: list[Message], calls: range) -> list[Message]:
    wanted = {f"call_{n}" for n in calls}
    ids = [m.id for m in messages if m.tool_responses and m.tool_responses[0].id in wanted]
    return mark_masked(messages, ids)


def notes(messages: list[Message]) -> list[Message]:
    return [m for m in visible(messages) if m.metadata.kind == TOOL_SUMMARY_KIND]


def fold(messages: list[Message], calls: range) -> list[Message]:
    applied = fold_calls(masked_results(messages, calls), [f"call_{n}" for n in calls])
    assert applied.ids("applied") == [f"call_{n}" for n in calls]
    return list(applied.messages)


def test_folded_calls_leave_the_view_behind_one_note_that_says_how_to_get_them() -> None:
    messages = fold(session(40), range(30))
    shown = visible(messages)
    assert not any(r.id == "call_0" for m in shown for r in m.tool_requests)
    [note] = notes(messages)
    text = note.text
    assert text.startswith(FOLD_NOTE_HEADER)
    assert "30 earlier tool calls (developer__shell x30)" in text
    assert 'context__recall("folded")' in text
    # The latest folded calls are named with their ids and arguments, the older ones not.
    for n in range(30 - LISTED_CALLS, 30):
        assert f"call_{n}: developer__shell" in text
    assert "call_3:" not in text
    # Nothing was deleted, and the view is one a provider accepts.
    assert len(messages) == 1 + 2 * 40 + 1
    assert fix_conversation(shown)[1] == []


def test_a_later_fold_replaces_the_note_and_its_size_stays_bounded() -> None:
    first = fold(session(40), range(30))
    longer = first + tool_loop(40, start=40)
    second = fold(longer, range(30, 70))
    [note] = notes(second)
    assert "70 earlier tool calls (developer__shell x70)" in note.text
    # One note for 70 calls is no longer than the one for 30, give or take the digits.
    assert len(note.text) <= len(notes(first)[0].text) + 20
    assert fix_conversation(visible(second))[1] == []


def test_the_note_keeps_the_first_line_of_the_latest_folded_errors() -> None:
    messages = [
        Message.user("Fix the build."),
        asks(call("call_0"), text="Building."),
        answers(output("call_0", "error: linker failed\n" + "detail\n" * 200, is_error=True)),
        *tool_loop(3, start=1),
    ]
    folded = fold(messages, range(2))
    [note] = notes(folded)
    assert "- call_0: error: linker failed" in note.text


def test_every_folded_call_is_recallable_with_what_the_model_said_with_it() -> None:
    messages = [
        Message.user("Fix the build."),
        asks(call("call_0", command="make"), text="Let me build it first."),
        answers(output("call_0", "make: *** [all] Error 2\n" + "x" * 600)),
        *tool_loop(3, start=1),
    ]
    folded = fold(messages, range(2))
    back = recall(folded, "call_0")
    assert back.found
    assert "make: *** [all] Error 2" in back.text
    assert "Let me build it first." in back.text
    listing = recall(folded, "folded")
    assert "2 tool calls out of view" in listing.text
    assert '- call_0: developer__shell {"command": "make"}' in listing.text
    assert "- call_1:" in listing.text and "call_2" not in listing.text


def test_nothing_folds_while_the_conversation_does_not_end_with_tool_results() -> None:
    messages = [*masked_results(session(12), range(5)), Message.user("And the docs?")]
    applied = fold_calls(messages, [f"call_{n}" for n in range(5)])
    assert not applied.changed
    assert set(applied.status.values()) == {"waiting"}


def test_one_folded_call_is_named_in_the_singular() -> None:
    [note] = notes(fold(session(5), range(1)))
    assert "1 earlier tool call (developer__shell x1)" in note.text


def test_a_long_error_line_is_cut_to_the_notes_width_and_a_fitting_one_kept_whole() -> None:
    from gosling.context_mgmt.folding import LINE_CHARS

    fits = "error: " + "f" * (LINE_CHARS - len("- call_0: error: "))
    long = "error: " + "l" * (2 * LINE_CHARS)
    messages = [
        Message.user("Fix the build."),
        asks(call("call_0"), text="Building."),
        answers(output("call_0", fits + "\nmore", is_error=True)),
        asks(call("call_1"), text="Again."),
        answers(output("call_1", long + "\nmore", is_error=True)),
        *tool_loop(3, start=2),
    ]
    [note] = notes(fold(messages, range(2)))
    lines = note.text.splitlines()
    assert f"- call_0: {fits}" in lines
    [cut] = [line for line in lines if line.startswith("- call_1: error: lll")]
    assert len(cut) == LINE_CHARS and cut.endswith("…")


def test_the_note_says_whether_it_lists_every_folded_call_or_the_latest() -> None:
    [few] = notes(fold(session(12), range(2)))
    assert "They are:" in few.text and "Latest of them:" not in few.text
    exactly = LISTED_CALLS
    [full] = notes(fold(session(exactly + 4), range(exactly)))
    assert "They are:" in full.text
    [many] = notes(fold(session(30), range(20)))
    assert "Latest of them:" in many.text and "They are:" not in many.text


def test_a_later_fold_works_on_a_slice_that_lacks_what_the_earlier_note_covered() -> None:
    """A library caller may fold a session's recent part only: the earlier note then names
    messages the slice does not hold."""
    first = fold(session(40), range(10))
    recent = [first[0], *first[21:], *tool_loop(5, start=40)]  # without calls 0-9
    assert not any(r.id == "call_0" for m in recent for r in m.tool_requests)
    calls = [f"call_{n}" for n in range(10, 20)]
    second = fold_calls(masked_results(recent, range(10, 20)), calls)
    assert second.ids("applied") == calls
    [note] = notes(list(second.messages))
    assert "10 earlier tool calls" in note.text
