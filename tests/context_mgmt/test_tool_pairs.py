"""Tool-pair summarization: the T4 cutoff and selection rules, the summary call, and applying
summaries pair-safe without breaking the agent view."""

from __future__ import annotations

import math

import pytest

from gosling.context_mgmt.pair_summarizer import ToolPairError, summarize_tool_pair
from gosling.context_mgmt.recall import recall_hint
from gosling.context_mgmt.tool_pairs import (
    TOOL_SUMMARY_KIND,
    TOOLCALL_SUMMARIZATION_BATCH_SIZE,
    apply_tool_pair_summaries,
    compute_tool_call_cutoff,
    tool_ids_to_summarize,
)
from gosling.conversation import Message, MessageMetadata, TextContent, fix_conversation
from gosling.providers import ScriptedProvider, ScriptedReply, Usage
from tests.context_mgmt.tool_conversations import (
    answers,
    applied,
    asks,
    call,
    note_for,
    notes_for,
    output,
    session,
    tool_loop,
    view_issues,
    visible,
    visible_tool_ids,
)

# -- cutoff (§7.1 T4) -------------------------------------------------------------------------


def t4_cutoff(limit: int, threshold: float) -> int:
    effective = math.floor(limit * threshold)
    return min(max(3 * effective // 20_000, 10), 500)


@pytest.mark.parametrize("limit", [8_000, 32_000, 128_000, 200_000, 400_000, 1_000_000, 10**7])
def test_cutoff_follows_the_t4_formula_at_the_default_threshold(limit: int) -> None:
    assert compute_tool_call_cutoff(limit, 0.8) == t4_cutoff(limit, 0.8)


def test_cutoff_grows_with_the_window_between_the_clamps() -> None:
    table = {limit: compute_tool_call_cutoff(limit, 0.8) for limit in (32_000, 128_000, 10**6)}
    assert table[32_000] == 10  # small windows keep the minimum
    assert 10 < table[128_000] < table[10**6] < 500
    assert compute_tool_call_cutoff(10**8, 0.8) == 500


@pytest.mark.parametrize("threshold", [0.0, -0.5, 1.5, float("nan"), float("inf")])
def test_a_threshold_outside_0_to_1_falls_back_to_0_8(threshold: float) -> None:
    assert compute_tool_call_cutoff(1_000_000, threshold) == t4_cutoff(1_000_000, 0.8)


def test_a_threshold_of_exactly_one_uses_the_whole_window() -> None:
    assert compute_tool_call_cutoff(1_000_000, 1.0) == t4_cutoff(1_000_000, 1.0)
    assert compute_tool_call_cutoff(1_000_000, 0.5) == t4_cutoff(1_000_000, 0.5)


# -- selection --------------------------------------------------------------------------------


def test_nothing_is_chosen_until_more_than_cutoff_plus_a_batch_are_eligible() -> None:
    batch = TOOLCALL_SUMMARIZATION_BATCH_SIZE
    assert tool_ids_to_summarize(session(10 + batch), 10, 0) == []
    chosen = tool_ids_to_summarize(session(10 + batch + 1), 10, 0)
    assert chosen == [f"call_{n}" for n in range(batch)]


def test_the_current_turns_calls_are_never_eligible() -> None:
    messages = session(25)
    assert tool_ids_to_summarize(messages, 10, protect_last_n=5) == []
    chosen = tool_ids_to_summarize(messages, 10, protect_last_n=4)
    assert len(chosen) == 10
    turn = messages[-2 * 4 :]
    protected = {r.id for m in turn for r in m.tool_requests}
    assert not protected & set(chosen)


def test_a_turn_longer_than_the_history_protects_everything() -> None:
    messages = session(40)
    assert tool_ids_to_summarize(messages, 0, protect_last_n=40) == []
    assert tool_ids_to_summarize(messages, 0, protect_last_n=100) == []


def test_hidden_calls_do_not_count() -> None:
    messages = session(21)
    assert tool_ids_to_summarize(messages, 10, 0) != []
    hidden = [messages[0], *(m.with_agent_invisible() for m in messages[1:3]), *messages[3:]]
    assert tool_ids_to_summarize(hidden, 10, 0) == []


def test_parallel_calls_count_one_by_one() -> None:
    parallel = [
        asks(*(call(f"p{n}_{k}") for k in range(3)))
        if i == 0
        else answers(*(output(f"p{n}_{k}", "ok") for k in range(3)))
        for n in range(7)
        for i in range(2)
    ]
    messages = [Message.user("go"), *parallel]
    assert len(visible_tool_ids(messages)) == 21
    chosen = tool_ids_to_summarize(messages, 10, 0)
    assert chosen == visible_tool_ids(messages)[:10]
    assert chosen[-1] == "p3_0"  # the batch boundary splits a parallel group


def test_excluded_ids_are_skipped_but_recent_calls_stay_verbatim() -> None:
    messages = session(35)
    first = tool_ids_to_summarize(messages, 10, 0)
    second = tool_ids_to_summarize(messages, 10, 0, exclude=set(first))
    assert second == [f"call_{n}" for n in range(10, 20)]
    everything_old = {f"call_{n}" for n in range(25)}
    assert tool_ids_to_summarize(messages, 10, 0, exclude=everything_old) == []


# -- the summary call -------------------------------------------------------------------------


async def test_summary_is_one_fast_call_and_an_agent_only_note() -> None:
    messages = [
        Message.user("What is failing?"),
        asks(call("call_1", command="pytest -x"), text="Let me run the tests."),
        answers(output("call_1", "FAILED tests/test_io.py::test_read - KeyError: 'path'")),
    ]
    provider = ScriptedProvider(["Ran pytest -x: tests/test_io.py::test_read failed (KeyError)."])
    note = (await summarize_tool_pair(provider, messages, "call_1")).message

    [request] = provider.requests
    assert request.fast and request.tools == () and len(request.messages) == 1
    assert "pytest -x" in request.system
    assert "KeyError: 'path'" in request.system
    assert "Let me run the tests." in request.system
    assert note.role == "user"
    assert note.metadata.agent_visible and not note.metadata.user_visible
    assert note.metadata.kind == TOOL_SUMMARY_KIND
    assert note.metadata.source_ids == (messages[1].id, messages[2].id)
    assert "test_read failed (KeyError)" in note.text
    assert "call_1" in note.text and recall_hint("call_1") in note.text


async def test_a_parallel_sibling_is_left_out_of_the_summary_prompt() -> None:
    messages = [
        Message.user("look"),
        asks(call("a", command="cat a.txt"), call("b", command="cat b.txt")),
        answers(output("a", "alpha contents"), output("b", "beta contents")),
    ]
    provider = ScriptedProvider(["read a.txt"])
    await summarize_tool_pair(provider, messages, "a")
    system = provider.requests[0].system
    assert "alpha contents" in system and "cat a.txt" in system
    assert "beta contents" not in system and "cat b.txt" not in system


async def test_a_huge_output_is_cut_from_the_middle_before_summarizing() -> None:
    huge = "START " + "y" * 200_000 + " END"
    messages = [Message.user("go"), asks(call("c")), answers(output("c", huge))]
    provider = ScriptedProvider(["big output"])
    await summarize_tool_pair(provider, messages, "c")
    system = provider.requests[0].system
    assert "START" in system and "END" in system
    assert "characters left out" in system
    assert len(system) < 60_000


async def test_usage_is_reported_and_filled_in_when_missing() -> None:
    messages = session(1)
    provider = ScriptedProvider(
        [ScriptedReply("ran a command", usage=Usage(input_tokens=321, output_tokens=9))]
    )
    reported = await summarize_tool_pair(provider, messages, "call_0")
    assert (reported.usage.input_tokens, reported.usage.output_tokens) == (321, 9)

    estimated = await summarize_tool_pair(ScriptedProvider(["ran a command"]), messages, "call_0")
    assert estimated.usage.input_tokens and estimated.usage.input_tokens > 0
    assert estimated.usage.output_tokens and estimated.usage.output_tokens > 0


async def test_a_missing_pair_or_an_empty_reply_is_an_error() -> None:
    unanswered = [Message.user("go"), asks(call("x"))]
    with pytest.raises(ToolPairError, match="No agent-visible tool pair found for tool id: x"):
        await summarize_tool_pair(ScriptedProvider(["-"]), unanswered, "x")
    with pytest.raises(ToolPairError, match="No agent-visible tool pair found"):
        await summarize_tool_pair(ScriptedProvider(["-"]), session(1), "nope")
    with pytest.raises(ToolPairError, match="empty summary"):
        await summarize_tool_pair(ScriptedProvider(["   "]), session(1), "call_0")


@pytest.mark.parametrize("hidden", ["response", "request"])
async def test_a_pair_with_a_hidden_half_is_not_summarized(hidden: str) -> None:
    """A pair already out of the agent's view (compacted, summarized) costs no model call."""
    messages = [Message.user("go"), asks(call("c")), answers(output("c", "result"))]
    index = 2 if hidden == "response" else 1
    messages[index] = messages[index].with_agent_invisible()
    provider = ScriptedProvider(["a note nobody would see"])
    with pytest.raises(ToolPairError, match="No agent-visible tool pair found for tool id: c"):
        await summarize_tool_pair(provider, messages, "c")
    assert provider.requests == []


# -- applying ---------------------------------------------------------------------------------


def test_summarized_pairs_are_hidden_and_one_note_is_appended() -> None:
    messages = session(12)
    ids = [f"call_{n}" for n in range(10)]
    new, flipped = applied(messages, notes_for(ids))

    assert len(new) == len(messages) + 1
    assert flipped == [m.id for m in messages[1:21]]
    assert all(not m.metadata.agent_visible for m in new[1:21])
    assert all(m.metadata.user_visible for m in new[1:21])  # the user still sees them
    assert [m.content for m in new[:-1]] == [m.content for m in messages]
    note = new[-1]
    assert note.role == "user" and note.metadata.kind == TOOL_SUMMARY_KIND
    assert not note.metadata.user_visible
    assert [p.text for p in note.content if isinstance(p, TextContent)] == [
        f"summary of {i}" for i in ids
    ]
    assert set(note.metadata.source_ids) == set(flipped)
    assert visible_tool_ids(new) == ["call_10", "call_11"]
    assert view_issues(new) == []


def test_a_parallel_group_is_hidden_only_when_all_its_calls_are_summarized() -> None:
    messages = [
        Message.user("go"),
        asks(call("a"), call("b")),
        answers(output("a", "A"), output("b", "B")),
        *tool_loop(1),
    ]
    plan = apply_tool_pair_summaries(messages, notes_for(["a"]))
    assert not plan.changed and plan.status == {"a": "waiting"}

    plan = apply_tool_pair_summaries(messages, notes_for(["a", "b"]))
    assert plan.status == {"a": "applied", "b": "applied"}
    assert plan.flipped_ids == (messages[1].id, messages[2].id)
    assert view_issues(plan.messages) == []


def test_a_request_is_never_hidden_without_its_response() -> None:
    messages = [
        Message.user("go"),
        asks(call("a"), call("b")),
        answers(output("a", "A")),  # "b" was never answered
        *tool_loop(1),
    ]
    plan = apply_tool_pair_summaries(messages, notes_for(["a", "b"]))
    assert plan.status == {"a": "dropped", "b": "dropped"}
    assert not plan.changed


def test_a_user_message_with_the_users_own_words_is_never_hidden() -> None:
    mixed = Message.user("also check b", output("a", "A"))
    messages = [Message.user("go"), asks(call("a")), mixed, *tool_loop(1)]
    plan = apply_tool_pair_summaries(messages, notes_for(["a"]))
    assert plan.status == {"a": "dropped"} and not plan.changed


def test_summaries_wait_until_the_conversation_ends_with_tool_results() -> None:
    messages = [*session(3), asks(text="All fixed."), Message.user("thanks, now the docs")]
    plan = apply_tool_pair_summaries(messages, notes_for(["call_0", "call_1"]))
    assert not plan.changed
    assert plan.status == {"call_0": "waiting", "call_1": "waiting"}

    later = [*messages, *tool_loop(1, start=3)]
    plan = apply_tool_pair_summaries(later, notes_for(["call_0", "call_1"]))
    assert plan.ids("applied") == ["call_0", "call_1"]
    assert view_issues(plan.messages) == []


def test_the_latest_tool_results_stay_when_asked_to_summarize_them() -> None:
    messages = session(2)
    plan = apply_tool_pair_summaries(messages, notes_for(["call_0", "call_1"]))
    assert plan.status == {"call_0": "applied", "call_1": "waiting"}
    assert visible_tool_ids(plan.messages) == ["call_1"]
    assert visible(plan.messages)[-1].metadata.kind == TOOL_SUMMARY_KIND
    assert view_issues(plan.messages) == []


def test_a_pair_between_two_user_messages_is_left_alone() -> None:
    hint = Message.user("<hints for src/>").agent_only().with_kind("hints")
    messages = [Message.user("go"), *tool_loop(1), hint, *tool_loop(3, start=1)]
    plan = apply_tool_pair_summaries(messages, notes_for(["call_0", "call_1", "call_2"]))
    assert plan.status == {"call_0": "dropped", "call_1": "applied", "call_2": "applied"}
    assert view_issues(plan.messages) == []


def test_a_second_batch_folds_the_first_note_into_one() -> None:
    messages = session(30)
    first, _ = applied(messages, notes_for([f"call_{n}" for n in range(10)]))
    grown = [*first, *tool_loop(2, start=30)]
    second = apply_tool_pair_summaries(grown, notes_for([f"call_{n}" for n in range(10, 20)]))

    notes = [m for m in visible(second.messages) if m.metadata.kind == TOOL_SUMMARY_KIND]
    assert len(notes) == 1
    texts = [p.text for p in notes[0].content if isinstance(p, TextContent)]
    assert texts == [f"summary of call_{n}" for n in range(20)]
    assert first[-1].id in second.flipped_ids
    assert first[-1].id in notes[0].metadata.source_ids
    assert view_issues(second.messages) == []


def test_a_note_stranded_by_a_stopped_turn_is_parked_and_brought_back() -> None:
    summarized, _ = applied(session(12), notes_for(["call_0"]))
    stranded = [*summarized, Message.user("never mind, do something else")]
    assert view_issues(stranded) != []  # the note and the new user message would merge

    parked = apply_tool_pair_summaries(stranded, {})
    assert parked.flipped_ids == (summarized[-1].id,) and not parked.appended
    assert view_issues(parked.messages) == []
    assert apply_tool_pair_summaries(parked.messages, {}).changed is False

    later = [*parked.messages, *tool_loop(1, start=12)]
    back = apply_tool_pair_summaries(later, {})
    assert back.flipped_ids == ()
    [note] = back.appended
    assert note.text == "summary of call_0"
    assert summarized[-1].id in note.metadata.source_ids
    assert view_issues(back.messages) == []
    assert apply_tool_pair_summaries(back.messages, {}).changed is False


def test_pairs_hidden_by_compaction_are_dropped() -> None:
    messages = [m.with_agent_invisible() for m in session(3)]
    summary = Message.user("summary").agent_only().with_kind("summary", [m.id for m in messages])
    compacted = [*messages, summary, *tool_loop(1, start=3)]
    plan = apply_tool_pair_summaries(compacted, notes_for(["call_0"]))
    assert plan.status == {"call_0": "dropped"} and not plan.changed


def test_application_is_pure() -> None:
    messages = session(12)
    before = list(messages)
    apply_tool_pair_summaries(messages, notes_for(["call_0"]))
    assert messages == before
    note = note_for("call_0")
    assert note.metadata == MessageMetadata.agent_only().with_kind(TOOL_SUMMARY_KIND)
    assert fix_conversation(visible(messages))[1] == []


def test_a_blank_summary_is_never_applied() -> None:
    plan = apply_tool_pair_summaries(session(3), {"call_0": note_for("call_0", text=" ")})
    assert plan.status == {"call_0": "dropped"} and not plan.changed
