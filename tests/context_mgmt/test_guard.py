"""`ContextBudget`: the token source, the baseline after compaction, and the loop guards."""

from __future__ import annotations

import pytest

from context_mgmt import (
    MAX_OVERFLOW_COMPACTIONS,
    CompactionFailed,
    ContextBudget,
    compact_messages,
)
from context_mgmt.tokens import default_counter
from conversation import Message
from providers import ModelConfig, ScriptedProvider, Usage

from .builders import STRUCTURED_REPLY


def _turn(text: str = "question") -> list[Message]:
    return [Message.user(text), Message.assistant("answer"), Message.user("follow-up")]


def test_without_reports_it_estimates_the_agent_visible_messages() -> None:
    messages = [*_turn(), Message.user("hidden " * 500).user_only()]
    budget = ContextBudget(100_000, overhead_tokens=250)
    check = budget.check(messages)
    assert check.source == "estimate"
    assert check.tokens == default_counter().count_chat("", messages[:3]) + 250
    assert not check.compact


def test_reported_usage_wins_and_new_messages_are_added_by_estimate() -> None:
    messages = _turn()
    budget = ContextBudget(10_000)
    budget.record_usage(Usage(input_tokens=7_000, output_tokens=500), messages)
    check = budget.check(messages)
    assert (check.tokens, check.source, check.compact) == (7_500, "reported", False)

    tool_output = Message.user("log line\n" * 400)
    grown = [*messages, tool_output]
    check = budget.check(grown)
    assert check.tokens == 7_500 + default_counter().count_message(tool_output)
    assert check.compact and "80%" in check.reason


async def test_the_baseline_resets_to_the_retained_context_after_compaction() -> None:
    """goose #4635: without a reset, every turn after the first compaction compacted again."""
    messages = _turn("x " * 3000)
    budget = ContextBudget(4_000)
    budget.record_usage(Usage(input_tokens=3_900, output_tokens=50), messages)
    assert budget.check(messages).compact

    result = await compact_messages(ScriptedProvider([STRUCTURED_REPLY]), messages)
    assert budget.compacted(result) is None
    check = budget.check(list(result.messages))
    assert (check.tokens, check.source) == (result.retained_tokens, "retained")
    assert not check.compact

    # The next turn adds a little; still no compaction.
    next_turn = [*result.messages, Message.assistant("ok"), Message.user("thanks")]
    assert not budget.check(next_turn).compact


async def test_still_over_after_compaction_is_reported_once_and_not_retried() -> None:
    huge_request = "please fix " + "this stack trace line\n" * 400
    messages = [Message.user("start"), Message.assistant("ok"), Message.user(huge_request)]
    limit = 2_000
    budget = ContextBudget(limit)
    assert budget.check(messages).compact

    result = await compact_messages(ScriptedProvider([STRUCTURED_REPLY]), messages)
    assert result.retained_tokens > 0.8 * limit  # the preserved request alone is too big
    notice = budget.compacted(result)
    assert notice is not None and "still" in notice and "80%" in notice

    compacted = list(result.messages)
    first = budget.check(compacted)
    assert not first.compact and "overflow path" in first.reason
    later = budget.check([*compacted, Message.assistant("working"), Message.user("go on")])
    assert not later.compact  # standing down until the context drops or compaction runs

    # Back under the threshold (a fresh, small provider report): the check is live again.
    budget.record_usage(Usage(input_tokens=500), compacted)
    assert not budget.check(compacted).compact
    budget.record_usage(Usage(input_tokens=1_900), compacted)
    assert budget.check(compacted).compact


def test_at_most_two_overflow_compactions_in_a_row() -> None:
    budget = ContextBudget(8_000)
    for _ in range(MAX_OVERFLOW_COMPACTIONS):
        budget.begin_overflow_compaction()
    with pytest.raises(CompactionFailed) as failure:
        budget.begin_overflow_compaction()
    assert failure.value.reason == "overflow_loop"
    assert "2 compactions in a row" in str(failure.value)
    assert "new session" in str(failure.value)


def test_a_successful_call_ends_the_overflow_streak() -> None:
    budget = ContextBudget(8_000)
    budget.begin_overflow_compaction()
    budget.begin_overflow_compaction()
    budget.record_usage(Usage(input_tokens=2_000), [])
    budget.begin_overflow_compaction()
    assert budget.overflow_compactions == 1


def test_providers_that_manage_their_own_context_are_skipped() -> None:
    provider = ScriptedProvider(
        model_config=ModelConfig(model="m", context_limit=1_000), manages_own_context=True
    )
    budget = ContextBudget.for_provider(provider)
    check = budget.check([Message.user("x " * 5_000)])
    assert not check.compact and "manages its own context" in check.reason


def test_a_disabled_threshold_never_compacts() -> None:
    budget = ContextBudget(1_000, threshold=0.0)
    budget.record_usage(Usage(input_tokens=990), [])
    assert not budget.check([]).compact
