"""`ContextPipeline`: where the context figure comes from, the threshold decision, the
baseline after compaction, the overflow streak, and what each strategy runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from gosling.agent.agent import Agent
from gosling.agent.config import Settings
from gosling.agent.context_pipeline import MAX_OVERFLOW_COMPACTIONS, ContextPipeline
from gosling.agent.events import CompactionFinished, Event, Notice
from gosling.agent.session import AgentSession
from gosling.context_mgmt import CompactingProvider, CompactionFailed
from gosling.context_mgmt.tokens import default_counter
from gosling.conversation import Message
from gosling.providers import ContextLengthExceeded, ModelConfig, ScriptedProvider, Usage
from tests.context_mgmt.builders import STRUCTURED_REPLY


def _session(
    tmp_path: Path,
    limit: int,
    messages: list[Message],
    steps: tuple[str, ...] = (),
    *,
    manages_own_context: bool = False,
    **settings: object,
) -> AgentSession:
    provider = ScriptedProvider(
        steps,
        model_config=ModelConfig("m", context_limit=limit),
        manages_own_context=manages_own_context,
    )
    agent = Agent(provider, config=Settings.model_validate(settings), working_dir=tmp_path)
    return agent.open_session(messages)


LONG_QUESTION = "question " + "with many details " * 100
"""Longer than the scripted summary, which is refused when it is not smaller."""


def _turn(text: str = "question") -> list[Message]:
    return [Message.user(text), Message.assistant("answer"), Message.user("follow-up")]


def _view(session: AgentSession) -> list[Message]:
    """The view as it stands (a request would drop a trailing reply)."""
    session.view.sync(session.messages)
    return session.view.messages()


async def _events(session: AgentSession, *, overflow: bool = False) -> list[Event]:
    pipeline = session.pipeline
    if overflow:
        return [e async for e in pipeline.overflowed(session, ContextLengthExceeded("too long"))]
    return [e async for e in pipeline.compact(session, trigger="threshold")]


def test_without_reports_it_estimates_the_agent_visible_messages(tmp_path: Path) -> None:
    session = _session(tmp_path, 100_000, [*_turn(), Message.user("hidden " * 500).user_only()])
    session.pipeline.size.overhead_tokens = 250
    check = session.pipeline.check(_view(session))
    assert check.source == "estimate"
    assert check.tokens == default_counter().count_chat("", session.messages[:3]) + 250
    assert not check.compact and check.automatic


def test_reported_usage_wins_and_new_messages_are_added_by_estimate(tmp_path: Path) -> None:
    session = _session(tmp_path, 10_000, _turn()[:1])
    sent = _view(session)
    session.pipeline.after_call(
        session, sent, Message.assistant("ok"), Usage(input_tokens=7_000, output_tokens=500)
    )
    check = session.pipeline.check(_view(session))
    assert (check.tokens, check.source, check.compact) == (7_500, "reported", False)
    assert session.context_tokens == 7_500

    tool_output = Message.user("log line\n" * 400)
    session.append(tool_output)
    check = session.pipeline.check(_view(session))
    assert check.tokens == 7_500 + default_counter().count_message(tool_output)
    assert check.compact and "80%" in check.reason


async def test_the_baseline_resets_to_the_retained_context_after_compaction(
    tmp_path: Path,
) -> None:
    """goose #4635: without a reset, every turn after the first compaction compacted again."""
    session = _session(tmp_path, 4_000, _turn("x " * 3000)[:1], (STRUCTURED_REPLY,))
    sent = _view(session)
    session.pipeline.after_call(
        session, sent, Message.assistant("ok"), Usage(input_tokens=3_900, output_tokens=50)
    )
    session.append(Message.user("go on"))
    assert session.pipeline.check(_view(session)).compact

    events = await _events(session)
    finished = next(e for e in events if isinstance(e, CompactionFinished))
    assert not any(isinstance(e, Notice) for e in events)
    check = session.pipeline.check(_view(session))
    assert (check.tokens, check.source) == (finished.tokens_after, "retained")
    assert not check.compact
    session.append(Message.assistant("ok"), Message.user("thanks"))
    assert not session.pipeline.check(_view(session)).compact


async def test_still_over_after_compaction_is_reported_once_and_not_retried(
    tmp_path: Path,
) -> None:
    huge = "please fix " + "this stack trace line\n" * 400
    messages = [Message.user("start"), Message.assistant("ok"), Message.user(huge)]
    session = _session(tmp_path, 2_000, messages, (STRUCTURED_REPLY,))
    assert session.pipeline.check(_view(session)).compact

    events = await _events(session)
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert len(notices) == 1 and "still" in notices[0] and "80%" in notices[0]
    first = session.pipeline.check(_view(session))
    assert not first.compact and "overflow path" in first.reason
    session.append(Message.assistant("working"), Message.user("go on"))
    assert not session.pipeline.check(_view(session)).compact  # standing down

    # Back under the threshold (a fresh, small provider report): the check is live again.
    reply = Message.assistant("fine")
    session.pipeline.after_call(session, _view(session), reply, Usage(input_tokens=500))
    assert not session.pipeline.check(_view(session)).compact
    reply = Message.assistant("more")
    session.pipeline.after_call(session, _view(session), reply, Usage(input_tokens=1_900))
    assert session.pipeline.check(_view(session)).compact


async def test_at_most_two_overflow_compactions_in_a_row(tmp_path: Path) -> None:
    steps = (STRUCTURED_REPLY,) * MAX_OVERFLOW_COMPACTIONS
    session = _session(tmp_path, 8_000, _turn(LONG_QUESTION), steps)
    for _ in range(MAX_OVERFLOW_COMPACTIONS):
        await _events(session, overflow=True)
    with pytest.raises(CompactionFailed) as failure:
        await _events(session, overflow=True)
    assert failure.value.reason == "overflow_loop"
    assert "2 compactions in a row" in str(failure.value)
    assert "new session" in str(failure.value)


async def test_a_successful_call_ends_the_overflow_streak(tmp_path: Path) -> None:
    session = _session(tmp_path, 8_000, _turn(LONG_QUESTION), (STRUCTURED_REPLY,) * 3)
    await _events(session, overflow=True)
    await _events(session, overflow=True)
    session.pipeline.after_call(session, [], Message.assistant("ok"), Usage(input_tokens=2_000))
    await _events(session, overflow=True)
    assert session.pipeline.overflow_compactions == 1


async def test_providers_that_manage_their_own_context_are_never_compacted(
    tmp_path: Path,
) -> None:
    session = _session(tmp_path, 1_000, [Message.user("x " * 5_000)], manages_own_context=True)
    check = session.pipeline.check(_view(session))
    assert not check.compact and "manages its own context" in check.reason
    with pytest.raises(ContextLengthExceeded):
        await _events(session, overflow=True)
    assert session.pipeline.masks_tool_results  # masking still applies (hybrid)


def test_a_compacting_provider_is_never_compacted_on_top(tmp_path: Path) -> None:
    inner = ScriptedProvider(model_config=ModelConfig(model="m", context_limit=32_000))
    agent = Agent(CompactingProvider(inner), working_dir=tmp_path)
    session = agent.open_session([Message.user("x " * 50_000)])
    assert not session.pipeline.check(_view(session)).compact
    reply = Message.assistant("ok")
    session.pipeline.after_call(session, _view(session), reply, Usage(input_tokens=31_000))
    assert not session.pipeline.check(_view(session)).compact


def test_a_disabled_threshold_never_compacts(tmp_path: Path) -> None:
    session = _session(tmp_path, 1_000, _turn(), auto_compact_threshold=0.0)
    session.pipeline.after_call(session, [], Message.assistant("ok"), Usage(input_tokens=990))
    check = session.pipeline.check(_view(session))
    assert not check.compact and not check.automatic
    assert check.reason == "auto_compact_threshold is off"


@pytest.mark.parametrize(
    ("strategy", "masks", "pairs", "at_threshold"),
    [("summarize", False, True, True), ("mask", True, False, False), ("hybrid", True, False, True)],
)
def test_each_strategy_runs_its_stages(
    strategy: str, masks: bool, pairs: bool, at_threshold: bool
) -> None:
    settings = Settings.model_validate({"context_strategy": strategy})
    pipeline = ContextPipeline(ScriptedProvider(), settings, default_counter())
    assert pipeline.masks_tool_results == masks
    assert (pipeline.pairs is not None) == pairs
    assert pipeline.compacts_at_threshold == at_threshold
    assert pipeline.compacts_on_overflow  # compaction on overflow is the last resort


def test_switches_and_self_managing_providers_narrow_what_runs() -> None:
    counter = default_counter()
    switched_off = Settings(context_strategy="summarize", tool_pair_summarization=False)
    assert ContextPipeline(ScriptedProvider(), switched_off, counter).pairs is None
    hosted = ScriptedProvider(manages_own_context=True)
    pipeline = ContextPipeline(hosted, Settings(context_strategy="summarize"), counter)
    assert pipeline.pairs is None and not pipeline.compacts_at_threshold
    assert not pipeline.compacts_on_overflow
    assert ContextPipeline(hosted, Settings(), counter).masks_tool_results
