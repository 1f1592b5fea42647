"""The removal ladder: which tool responses go first, and what the summarizer was sent at
each rung when the model overflows (reference §4.4, §4.5)."""

from __future__ import annotations

import pytest

from gosling.context_mgmt import (
    REMOVAL_PERCENTAGES,
    CompactionFailed,
    filter_tool_responses,
    summarize,
)
from gosling.context_mgmt.ladder import removal_order
from gosling.conversation import Message
from gosling.providers import RateLimited, ScriptedProvider

from .builders import always_overflow, outputs_in, overflow_above, tool_session


def _kept_outputs(messages: list[Message]) -> list[int]:
    return [int(m.tool_responses[0].text().split("-")[1]) for m in messages if m.tool_responses]


def test_rungs() -> None:
    assert REMOVAL_PERCENTAGES == (0, 10, 20, 50, 100)


def test_ten_responses_are_removed_middle_out() -> None:
    messages = tool_session(10)
    assert _kept_outputs(filter_tool_responses(messages, 0)) == list(range(10))
    assert _kept_outputs(filter_tool_responses(messages, 10)) == [0, 1, 2, 3, 5, 6, 7, 8, 9]
    assert _kept_outputs(filter_tool_responses(messages, 20)) == [0, 1, 2, 3, 6, 7, 8, 9]
    assert _kept_outputs(filter_tool_responses(messages, 50)) == [0, 1, 7, 8, 9]
    assert _kept_outputs(filter_tool_responses(messages, 100)) == []


def test_only_tool_response_messages_are_removed() -> None:
    messages = tool_session(4)
    filtered = filter_tool_responses(messages, 100)
    assert filtered == [m for m in messages if not m.tool_responses]


@pytest.mark.parametrize("count", [1, 2, 3, 5, 7])
def test_every_rung_removes_at_least_one_and_all_means_all(count: int) -> None:
    messages = tool_session(count)
    for percent in REMOVAL_PERCENTAGES[1:]:
        assert len(_kept_outputs(filter_tool_responses(messages, percent))) < count
    assert _kept_outputs(filter_tool_responses(messages, 100)) == []


def test_odd_counts_start_at_the_centre() -> None:
    assert removal_order(5) == [2, 1, 3, 0, 4]
    assert removal_order(1) == [0]
    assert removal_order(10) == [4, 5, 3, 6, 2, 7, 1, 8, 0, 9]


def test_out_of_range_percent_is_refused() -> None:
    with pytest.raises(ValueError, match="between 0 and 100"):
        filter_tool_responses(tool_session(2), 150)


async def test_ladder_steps_down_until_the_prompt_fits() -> None:
    messages = tool_session(10)
    provider = ScriptedProvider([overflow_above(5)] * 5)
    summary = await summarize(provider, messages)

    sent = [outputs_in(r.system, 10) for r in provider.requests]
    assert sent == [
        list(range(10)),  # 0%: overflows
        [0, 1, 2, 3, 5, 6, 7, 8, 9],  # 10%: output-4 dropped, overflows
        [0, 1, 2, 3, 6, 7, 8, 9],  # 20%: output-5 too, overflows
        [0, 1, 7, 8, 9],  # 50%: fits
    ]
    assert summary.removal_percent == 50
    assert summary.removed_tool_responses == 5
    assert summary.requests == 4
    assert all(r.fast and r.tools == () for r in provider.requests)
    assert summary.message.role == "user"


async def test_no_tool_responses_fails_fast_with_advice() -> None:
    messages = [Message.user("a very long question"), Message.assistant("a long answer")]
    provider = ScriptedProvider([always_overflow] * 5)
    with pytest.raises(CompactionFailed) as failure:
        await summarize(provider, messages)
    assert len(provider.requests) == 1
    assert failure.value.requests == 1
    assert failure.value.reason == "no_tool_responses"
    message = str(failure.value)
    # goose's phrases (PR #10500), which users and tests search for
    assert "there are no tool responses to remove" in message
    assert "a larger usable context" in message
    assert "disable some extensions" in message
    assert "start a new session" in message


async def test_exhausted_ladder_says_so() -> None:
    provider = ScriptedProvider([always_overflow] * 5)
    with pytest.raises(CompactionFailed) as failure:
        await summarize(provider, tool_session(10))
    assert len(provider.requests) == 5
    assert failure.value.reason == "exhausted"
    assert "context limit exceeded even after removing all tool responses" in str(failure.value)
    assert "(5 requests)" in str(failure.value)
    assert outputs_in(provider.requests[-1].system, 10) == []


async def test_rungs_that_would_resend_the_same_prompt_are_skipped() -> None:
    # Three tool responses: 10%, 20% and 50% each leave out one (the middle), so the 20% and
    # 50% rungs would send the 10% prompt again and pay for the same overflow twice more.
    provider = ScriptedProvider([always_overflow] * 5)
    with pytest.raises(CompactionFailed) as failure:
        await summarize(provider, tool_session(3))
    carried = [outputs_in(r.system, 3) for r in provider.requests]
    assert carried == [[0, 1, 2], [0, 2], []]
    assert (failure.value.reason, failure.value.requests) == ("exhausted", 3)


async def test_the_skipped_rungs_do_not_hide_the_one_that_fits() -> None:
    provider = ScriptedProvider([overflow_above(0)] * 5)
    summary = await summarize(provider, tool_session(3))
    assert (summary.removal_percent, summary.removed_tool_responses) == (100, 3)
    assert len(provider.requests) == 3


async def test_other_errors_propagate_unchanged() -> None:
    error = RateLimited("slow down", retry_after=3)
    provider = ScriptedProvider([error])
    with pytest.raises(RateLimited) as raised:
        await summarize(provider, tool_session(3))
    assert raised.value is error
    assert len(provider.requests) == 1
