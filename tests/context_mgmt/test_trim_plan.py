"""When trimming old tool output pays: what a trim would save and re-send (hand-computed on
made-up token counts), and the clock that decides the moment under each prompt cache."""

from __future__ import annotations

import pytest

from gosling.context_mgmt.trim_plan import (
    FOLD_NOTE_TOKENS,
    TrimClock,
    TrimPlan,
    kept_boundary,
    plan_trim,
)
from gosling.conversation import Message
from gosling.providers.prompt_cache import ANTHROPIC_CACHE, NO_CACHE, OPENAI_CACHE, PromptCache
from tests.context_mgmt.tool_conversations import mark_masked, session, shown

ASK, RESULT, PLACEHOLDER, TASK = 50, 1_000, 40, 5


def count(message: Message) -> int:
    """Made-up sizes, so every figure below can be added up by hand."""
    if message.role == "assistant":
        return ASK
    if message.tool_responses:
        return PLACEHOLDER if message.metadata.masked else RESULT
    return TASK


def preview(message: Message) -> Message:
    return message.with_metadata(message.metadata.with_masked())


def results(messages: list[Message], calls: range) -> list[str]:
    wanted = {f"call_{n}" for n in calls}
    return [m.id for m in messages if m.tool_responses and m.tool_responses[0].id in wanted]


def test_the_newest_calls_stay_whole_by_count_and_by_tokens() -> None:
    view = session(15)  # task, then 15 calls of (ask, result): call n's ask is at 1 + 2n
    assert kept_boundary(view, count, keep_last=10, keep_tokens=100_000) == (11, 10)
    assert kept_boundary(view, count, keep_last=10, keep_tokens=3_500) == (25, 3)
    # The newest result stays whole whatever its size.
    assert kept_boundary(view, count, keep_last=10, keep_tokens=10) == (29, 1)
    assert kept_boundary(view, count, keep_last=0, keep_tokens=100_000) == (31, 0)
    assert kept_boundary(view, count, keep_last=1, keep_tokens=10) == (29, 1)


def test_a_trim_masks_the_calls_older_than_the_kept_ones_and_counts_what_it_resends() -> None:
    view = session(15)  # task, then 15 calls of (ask, result)
    plan = plan_trim(view, count, preview, keep_last=10, keep_tokens=100_000)
    assert plan.mask == tuple(results(view, range(5)))
    assert plan.fold == ()
    assert plan.saved_tokens == 5 * (RESULT - PLACEHOLDER)
    # From the first placeholder on: 5 placeholders, the asks of calls 1-4, then 10 calls
    # whole.
    assert plan.resent_tokens == 5 * PLACEHOLDER + 4 * ASK + 10 * (ASK + RESULT)


def test_a_change_further_back_than_the_lookback_resends_the_whole_conversation() -> None:
    view = session(15)
    plan = plan_trim(view, count, preview, keep_last=10, keep_tokens=100_000, lookback=20)
    # The first change is 29 messages before the end: Anthropic finds no cached prefix.
    assert plan.resent_tokens == TASK + ASK + 5 * PLACEHOLDER + 4 * ASK + 10 * (ASK + RESULT)
    near = plan_trim(view, count, preview, keep_last=10, keep_tokens=100_000, lookback=40)
    assert near.resent_tokens == plan.resent_tokens - TASK - ASK


def test_calls_masked_by_an_earlier_trim_are_folded_by_the_next() -> None:
    messages = session(15)
    view = shown(mark_masked(messages, results(messages, range(3))))
    plan = plan_trim(view, count, preview, keep_last=10, keep_tokens=100_000)
    assert plan.fold == ("call_0", "call_1", "call_2")
    assert plan.mask == tuple(results(view, range(3, 5)))
    folded = 3 * (ASK + PLACEHOLDER)
    assert plan.saved_tokens == folded + 2 * (RESULT - PLACEHOLDER) - FOLD_NOTE_TOKENS
    # Everything from the first folded ask on is sent again, with the note.
    resent = 2 * (ASK + PLACEHOLDER) + 10 * (ASK + RESULT) + FOLD_NOTE_TOKENS
    assert plan.resent_tokens == resent


def test_nothing_old_enough_means_no_trim() -> None:
    plan = plan_trim(session(10), count, preview, keep_last=10, keep_tokens=100_000)
    assert plan.empty and (plan.saved_tokens, plan.resent_tokens) == (0, 0)


def test_a_plan_can_start_where_the_last_one_found_everything_settled() -> None:
    messages = session(40)
    # Calls 0-29 were masked and folded long ago (their messages left the view); 30-34 are
    # placeholders waiting to be folded; 35-39 are new.
    view = shown(mark_masked(messages, results(messages, range(30, 35))))
    view = [view[0], *view[61:]]
    whole = plan_trim(view, count, preview, keep_last=3, keep_tokens=100_000)
    assert whole.settled == 1  # the first placeholder's call
    again = plan_trim(view, count, preview, keep_last=3, keep_tokens=100_000, start=1)
    assert again == whole
    # Once they are folded and the old ones masked, only the kept calls remain to look at.
    later = [view[0], *view[11:]]
    later = shown(mark_masked(later, results(later, range(35, 37))))
    waiting = plan_trim(later, count, preview, keep_last=3, keep_tokens=100_000, can_fold=False)
    # No place for a note: the placeholders wait, and masking would start at the kept calls.
    assert waiting.empty and waiting.settled == len(later) - 2 * 3
    folding = plan_trim(later, count, preview, keep_last=3, keep_tokens=100_000, start=1)
    assert folding.fold == ("call_35", "call_36") and folding.settled == 1
    folded = [later[0], *later[5:]]
    done = plan_trim(folded, count, preview, keep_last=3, keep_tokens=100_000)
    assert done.empty and done.settled == len(folded) - 2 * 3


def growing(clock: TrimClock, calls: int, resent: int = 4_600) -> list[bool]:
    """Feed the clock a pile of old output growing by 1,000 tokens a call."""
    return [
        clock.due(TrimPlan(mask=("m",), saved_tokens=1_000 * k, resent_tokens=resent))
        for k in range(1, calls + 1)
    ]


@pytest.mark.parametrize(
    ("cache", "patience", "calls"),
    [
        # Anthropic: the miss is (1.25 - 0.1) x 4,600 = 5,290, keeping costs 0.1 a token and
        # call. After b calls keeping has cost 100 x b(b+1)/2; one more call would cost
        # 100 x b; the cycle ends once 100 x b x b >= 100 x b(b+1)/2 + patience x 5,290,
        # i.e. 50 x b(b-1) >= patience x 5,290: b = 11 (5,500), or 16 (12,000 >= 10,580).
        (ANTHROPIC_CACHE, 1.0, 11),
        (ANTHROPIC_CACHE, 2.0, 16),
        # OpenAI: a miss is a new input (1 - 0.1) x 4,600 = 4,140: 50 x b(b-1) >= 4,140.
        (OPENAI_CACHE, 1.0, 10),
        # No cache: every token is paid on every call, so trimming pays at once.
        (NO_CACHE, 2.0, 1),
    ],
)
def test_a_steadily_growing_pile_is_trimmed_when_the_cycle_is_cheapest(
    cache: PromptCache, patience: float, calls: int
) -> None:
    clock = TrimClock(cache, patience)
    assert growing(clock, calls) == [False] * (calls - 1) + [True]
    # A trim starts a new cycle: the same pile again takes as long.
    assert growing(clock, calls) == [False] * (calls - 1) + [True]


def test_a_big_output_late_in_a_cycle_is_trimmed_at_once_and_an_early_one_waits() -> None:
    lump = TrimPlan(mask=("m",), saved_tokens=1_000, resent_tokens=1_000)
    # The miss: 1.15 x 1,000 = 1,150, as much as 11.5 calls of keeping the 1,000 tokens.
    late = TrimClock(ANTHROPIC_CACHE, 1.0)
    assert not any(late.due(TrimPlan()) for _ in range(20))
    assert late.due(lump)  # 21 calls into the cycle: ending it now lowers the average
    early = TrimClock(ANTHROPIC_CACHE, 1.0)
    assert not any(early.due(TrimPlan()) for _ in range(9))
    # 10 calls in, the same output alone never pays for a new cycle...
    assert not any(early.due(lump) for _ in range(50))
    # ...until more old output piles up.
    more = [
        early.due(TrimPlan(mask=("m",), saved_tokens=1_000 * k, resent_tokens=1_000))
        for k in range(2, 10)
    ]
    assert any(more)


def test_a_plan_that_saves_nothing_is_never_due() -> None:
    clock = TrimClock(NO_CACHE, 0.0)
    assert not clock.due(TrimPlan())
    assert not clock.due(TrimPlan(fold=("call_0",), saved_tokens=0, resent_tokens=10))


def test_the_kept_calls_may_fill_the_token_budget_exactly() -> None:
    view = session(15)  # each result counts RESULT tokens
    assert kept_boundary(view, count, keep_last=10, keep_tokens=3 * RESULT) == (25, 3)
    assert kept_boundary(view, count, keep_last=10, keep_tokens=3 * RESULT - 1) == (27, 2)


def test_a_view_that_begins_with_a_call_keeps_that_call_too() -> None:
    """A library caller's slice of a session may start at a tool call."""
    view = session(3)[1:]
    assert kept_boundary(view, count, keep_last=10, keep_tokens=100_000) == (0, 3)


def folded_view(folded: range, masked: range) -> list[Message]:
    """A session of 15 calls whose calls `folded` are behind a folding note and `masked`
    are placeholders."""
    from gosling.context_mgmt.folding import fold_calls

    messages = session(15)
    messages = mark_masked(messages, results(messages, range(folded.stop)))
    messages = list(fold_calls(messages, [f"call_{n}" for n in folded]).messages)
    return shown(mark_masked(messages, results(messages, masked)))


def test_a_fold_counts_the_note_it_replaces_as_saved() -> None:
    from gosling.context_mgmt.tool_pairs import TOOL_SUMMARY_KIND

    view = folded_view(range(3), range(3, 12))
    [note] = [m for m in view if m.metadata.kind == TOOL_SUMMARY_KIND]
    plan = plan_trim(view, count, preview, keep_last=3, keep_tokens=100_000)
    assert plan.fold == tuple(f"call_{n}" for n in range(3, 12))
    assert plan.saved_tokens == 9 * (ASK + PLACEHOLDER) + count(note) - FOLD_NOTE_TOKENS


def test_a_fold_that_costs_more_than_it_hides_saves_nothing() -> None:
    view = folded_view(range(3), range(3, 5))
    plan = plan_trim(view, count, preview, keep_last=10, keep_tokens=100_000)
    assert plan.fold == ("call_3", "call_4")
    assert 2 * (ASK + PLACEHOLDER) < FOLD_NOTE_TOKENS
    assert plan.saved_tokens == 0


def test_a_change_to_messages_not_in_view_saves_and_resends_nothing() -> None:
    from gosling.context_mgmt.trim_plan import change_figures

    assert change_figures(session(5), {"not-in-view": 0}, count, added_tokens=10) == (0, 0)


def test_a_change_to_the_first_message_counts_from_the_start_of_the_view() -> None:
    from gosling.context_mgmt.trim_plan import change_figures

    view = session(3)
    rest = sum(count(m) for m in view[1:])
    assert change_figures(view, {view[0].id: 0}, count) == (TASK, rest)
    # Further back than Anthropic's look-back: the same, there is nothing before it.
    assert change_figures(view, {view[0].id: 0}, count, lookback=2) == (TASK, rest)


def test_an_old_call_with_a_long_argument_is_where_the_settled_part_ends() -> None:
    """Its output is small (nothing to mask there), but its argument can still be cut."""
    from tests.context_mgmt.tool_conversations import answers, asks, call, output

    long_call = call("call_long", "developer__write", path="a.txt", content="w" * 2_000)
    view = [
        *session(0),
        asks(long_call),
        answers(output("call_long", "ok")),
        *[m for n in range(12) for m in (asks(call(f"s{n}")), answers(output(f"s{n}", "ok")))],
    ]
    plan = plan_trim(view, count, preview, keep_last=3, keep_tokens=100_000)
    assert plan.settled == 1


def test_past_the_look_back_only_what_follows_the_cache_anchor_is_sent_again() -> None:
    from gosling.context_mgmt.trim_plan import change_figures

    view = session(10)
    change = {view[15].id: 0}
    anchored = change_figures(view, change, count, lookback=2, start=12, anchor=5)
    resent = sum(count(m) for m in view[6:12]) + sum(count(m) for m in view[12:]) - count(view[15])
    assert anchored == (count(view[15]), resent)
    # An anchor at or after `start` says nothing about what is settled before it.
    before = resent + sum(count(m) for m in view[:6])
    for anchor in (12, 14):
        unanchored = change_figures(view, change, count, lookback=2, start=12, anchor=anchor)
        assert unanchored == (count(view[15]), before)
    # Given the view's tokens, what lies before `start` is not counted again.
    total = sum(count(m) for m in view)
    known = change_figures(view, change, count, lookback=2, start=12, view_tokens=total)
    assert known == (count(view[15]), before)


def test_calls_before_a_new_user_message_are_kept_too() -> None:
    view = [*session(3), Message.user("Now the other module."), *session(2)[1:]]
    # call_0 and call_1 of the second session share ids with the first: only the count matters.
    assert kept_boundary(view, count, keep_last=10, keep_tokens=100_000) == (1, 5)


def test_without_a_look_back_a_change_resends_only_from_itself_on() -> None:
    """OpenAI's cache: any shared prefix counts, whatever came before the plan's start."""
    from gosling.context_mgmt.trim_plan import change_figures

    view = session(10)
    figures = change_figures(view, {view[15].id: 0}, count, start=12)
    assert figures == (count(view[15]), sum(count(m) for m in view[16:]))


def test_with_free_cached_reads_keeping_old_output_costs_nothing_so_no_trim_is_due() -> None:
    """A local server configured with `read = 0`: a cached prefix is free, a trim is not."""
    free = PromptCache(mechanism="prefix", read=0.0, write=0.0, output=1.0, lookback=0)
    clock = TrimClock(free)
    plan = TrimPlan(mask=("m",), saved_tokens=5_000, resent_tokens=50_000, paid_once=100.0)
    assert not any(clock.due(plan) for _ in range(200))


def test_the_newest_calls_kept_are_contiguous_even_when_an_older_one_would_fit() -> None:
    view = session(4)  # call n's result is at 2 + 2n
    big = view[2 + 2 * 2].id  # call_2's result

    def sized(message: Message) -> int:
        return 5_000 if message.id == big else count(message)

    assert kept_boundary(view, sized, keep_last=10, keep_tokens=3_000) == (7, 1)


def test_an_assistant_text_between_calls_is_not_where_the_kept_calls_begin() -> None:
    from tests.context_mgmt.tool_conversations import answers, asks, call, output

    view = [
        Message.user("Fix it."),
        asks(call("old")),
        answers(output("old", "x" * 10)),
        Message.assistant("Half way there."),
        asks(call("new")),
        answers(output("new", "y" * 10)),
    ]
    assert kept_boundary(view, count, keep_last=10, keep_tokens=RESULT) == (4, 1)


def test_the_settled_part_ends_at_a_folding_note_only_when_a_fold_can_replace_it() -> None:
    from gosling.context_mgmt.folding import fold_calls
    from gosling.context_mgmt.tool_pairs import TOOL_SUMMARY_KIND
    from tests.context_mgmt.tool_conversations import tool_loop

    messages = session(15)
    messages = mark_masked(messages, results(messages, range(15)))
    messages = [*fold_calls(messages, [f"call_{n}" for n in range(15)]).messages]
    view = shown([*messages, *tool_loop(15, start=15)])  # ..., the note, 15 new calls
    note = next(i for i, m in enumerate(view) if m.metadata.kind == TOOL_SUMMARY_KIND)
    folding = plan_trim(view, count, preview, keep_last=3, keep_tokens=100_000)
    assert folding.settled <= note
    waiting = plan_trim(view, count, preview, keep_last=3, keep_tokens=100_000, can_fold=False)
    assert waiting.settled == note + 1  # the first new call, whose output can be masked
