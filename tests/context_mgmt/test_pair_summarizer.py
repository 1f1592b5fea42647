"""The background tool-pair summarizer: runs while the model works, applies between
iterations, never summarizes a pair twice, survives failures and cancels cleanly."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import pytest

from gosling.context_mgmt.pair_summarizer import ToolPairSummarizer
from gosling.context_mgmt.tool_pairs import TOOL_SUMMARY_KIND, compute_tool_call_cutoff
from gosling.conversation import Message
from gosling.providers import ModelConfig, ScriptedProvider, ServerError, ToolSpec, Usage
from gosling.providers.testing import Step
from tests.context_mgmt.tool_conversations import (
    answers,
    asks,
    call,
    output,
    session,
    tool_loop,
    view_issues,
    visible,
    visible_tool_ids,
)

TASK_NAME = "gosling-tool-pair-summaries"


class GatedProvider(ScriptedProvider):
    """A scripted provider whose calls wait for `gate`, like a slow fast-model."""

    def __init__(self, steps: Sequence[Step]) -> None:
        super().__init__(steps)
        self.gate = asyncio.Event()
        self.started = asyncio.Event()

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> tuple[Message, Usage]:
        self.started.set()
        await self.gate.wait()
        return await super().complete(system, messages, tools, fast=fast)


def summaries(count: int) -> list[Step]:
    return [f"summary {n}" for n in range(count)]


def summarizer_tasks() -> list[asyncio.Task[object]]:
    return [t for t in asyncio.all_tasks() if t.get_name() == TASK_NAME]


async def test_a_batch_runs_in_the_background_and_applies_between_iterations() -> None:
    messages = session(21)
    provider = GatedProvider(summaries(10))
    summarizer = ToolPairSummarizer(provider, cutoff=10)

    started = summarizer.maybe_schedule(messages, protect_last_n=0)
    assert started == [f"call_{n}" for n in range(10)]
    await provider.started.wait()
    assert summarizer.running and summarizer.in_flight == tuple(started)
    assert summarizer.maybe_schedule(messages, protect_last_n=0) == []  # one batch at a time
    assert not summarizer.apply_ready(messages).changed  # nothing finished yet

    provider.gate.set()
    await summarizer.collect()
    assert not summarizer.running and summarizer.ready == tuple(started)
    application = summarizer.apply_ready(messages)
    assert application.ids("applied") == started
    assert visible_tool_ids(application.messages) == [f"call_{n}" for n in range(10, 21)]
    [note] = application.appended
    assert note.metadata.kind == TOOL_SUMMARY_KIND and "summary 9" in note.text
    assert view_issues(application.messages) == []
    assert summarizer.ready == ()
    provider.assert_complete()


async def test_usage_of_every_summary_call_is_reported_once() -> None:
    provider = ScriptedProvider([*summaries(10)])
    summarizer = ToolPairSummarizer(provider, cutoff=10)
    summarizer.maybe_schedule(session(21), protect_last_n=0)
    await summarizer.collect()
    usage = summarizer.take_usage()
    assert len(usage) == 10
    assert all(u.input_tokens and u.output_tokens for u in usage)
    assert summarizer.take_usage() == []


async def test_no_pair_is_summarized_twice() -> None:
    messages = session(21)
    provider = ScriptedProvider(summaries(11))
    summarizer = ToolPairSummarizer(provider, cutoff=10)
    first = summarizer.maybe_schedule(messages, protect_last_n=0)
    await summarizer.collect()
    # Finished but not applied yet: the same snapshot must not bring the same ids back.
    second = summarizer.maybe_schedule(messages, protect_last_n=0)
    assert second == ["call_10"]
    assert summarizer.schedule(messages, first) == []
    await summarizer.collect()
    application = summarizer.apply_ready(messages)
    assert summarizer.maybe_schedule(application.messages, protect_last_n=0) == []
    summarized = [r.system for r in provider.requests]
    assert len(summarized) == len(set(summarized)) == 11
    provider.assert_complete()


async def test_the_current_turn_is_protected() -> None:
    messages = session(25)
    summarizer = ToolPairSummarizer(ScriptedProvider(summaries(10)), cutoff=10)
    assert summarizer.maybe_schedule(messages, protect_last_n=5) == []
    assert len(summarizer.maybe_schedule(messages, protect_last_n=4)) == 10
    await summarizer.cancel()


async def test_a_failing_summary_is_logged_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    messages = session(21)
    steps = summaries(10)
    steps[3] = ServerError("fast model overloaded")
    provider = ScriptedProvider(steps)
    summarizer = ToolPairSummarizer(provider, cutoff=0)
    with caplog.at_level(logging.WARNING, logger="gosling.context_mgmt.pair_summarizer"):
        summarizer.maybe_schedule(messages, protect_last_n=0)
        await summarizer.collect()
    assert "Failed to summarize tool pair call_3" in caplog.text
    assert "fast model overloaded" in caplog.text

    application = summarizer.apply_ready(messages)
    assert "call_3" not in application.status
    assert len(application.ids("applied")) == 9
    assert visible_tool_ids(application.messages)[0] == "call_3"  # still there, verbatim
    assert view_issues(application.messages) == []
    assert len(summarizer.take_usage()) == 9

    # One more attempt later (max_attempts=2), then never again.
    provider.add(*summaries(10))
    retry = summarizer.maybe_schedule(application.messages, protect_last_n=0)
    assert retry[0] == "call_3"
    await summarizer.cancel()


async def test_a_call_that_keeps_failing_is_given_up() -> None:
    messages = session(21)
    steps = summaries(10)
    steps[3] = ServerError("down")
    summarizer = ToolPairSummarizer(ScriptedProvider(steps), cutoff=0, max_attempts=1)
    summarizer.maybe_schedule(messages, protect_last_n=0)
    await summarizer.collect()
    after = summarizer.apply_ready(messages).messages
    again = summarizer.maybe_schedule(after, protect_last_n=0)
    assert "call_3" not in again and again[0] == "call_10"
    await summarizer.cancel()


async def test_a_pair_that_cannot_be_summarized_is_not_retried(
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider = ScriptedProvider([])
    summarizer = ToolPairSummarizer(provider, cutoff=0)
    with caplog.at_level(logging.WARNING):
        assert summarizer.schedule(session(3), ["ghost"]) == ["ghost"]
        await summarizer.collect()
    assert "ghost" in caplog.text
    assert summarizer.schedule(session(3), ["ghost"]) == []
    assert provider.requests == []


async def test_cancel_stops_the_batch_and_applies_nothing() -> None:
    messages = session(21)
    provider = GatedProvider(summaries(20))
    summarizer = ToolPairSummarizer(provider, cutoff=10)
    started = summarizer.maybe_schedule(messages, protect_last_n=0)
    await provider.started.wait()
    [task] = summarizer_tasks()

    await summarizer.cancel()
    assert task.cancelled()
    assert summarizer_tasks() == []
    assert not summarizer.running and summarizer.in_flight == ()
    provider.gate.set()
    assert not summarizer.apply_ready(messages).changed
    assert summarizer.ready == ()
    assert provider.requests == [] and len(provider.steps) == 20  # cut off while waiting
    await summarizer.cancel()  # twice is fine

    # Cancelled ids are not "done": a later batch may summarize them.
    assert summarizer.maybe_schedule(messages, protect_last_n=0) == started
    await summarizer.collect()
    assert summarizer.apply_ready(messages).ids("applied") == started


async def test_cancel_without_a_batch_is_a_no_op() -> None:
    summarizer = ToolPairSummarizer(ScriptedProvider([]))
    await summarizer.cancel()
    await summarizer.collect()
    assert not summarizer.running


async def test_a_parallel_group_split_by_the_batch_boundary_waits_for_its_siblings() -> None:
    groups = []
    for n in range(7):
        ids = [f"p{n}_{k}" for k in range(3)]
        groups += [asks(*(call(i) for i in ids)), answers(*(output(i, "x" * 500) for i in ids))]
    messages = [Message.user("go"), *groups]
    provider = ScriptedProvider(summaries(20))
    summarizer = ToolPairSummarizer(provider, cutoff=0)

    summarizer.maybe_schedule(messages, protect_last_n=0)
    await summarizer.collect()
    first = summarizer.apply_ready(messages)
    assert first.status["p3_0"] == "waiting"
    assert visible_tool_ids(first.messages)[0] == "p3_0"
    assert summarizer.ready == ("p3_0",)

    second_ids = summarizer.maybe_schedule(first.messages, protect_last_n=0)
    assert second_ids[:2] == ["p3_1", "p3_2"] and "p3_0" not in second_ids
    await summarizer.collect()
    second = summarizer.apply_ready(first.messages)
    assert {second.status[i] for i in ("p3_0", "p3_1", "p3_2")} == {"applied"}
    assert visible_tool_ids(second.messages) == ["p6_0", "p6_1", "p6_2"]
    notes = [m for m in visible(second.messages) if m.metadata.kind == TOOL_SUMMARY_KIND]
    assert len(notes) == 1
    assert view_issues(second.messages) == []


def test_the_cutoff_comes_from_the_window_unless_overridden() -> None:
    provider = ScriptedProvider([], model_config=ModelConfig("m", context_limit=1_000_000))
    assert ToolPairSummarizer(provider).cutoff == compute_tool_call_cutoff(1_000_000, 0.8)
    assert ToolPairSummarizer(provider, threshold=0.5).cutoff == compute_tool_call_cutoff(
        1_000_000, 0.5
    )
    assert ToolPairSummarizer(provider, cutoff=7).cutoff == 7
    with pytest.raises(ValueError, match="tool_call_cutoff"):
        ToolPairSummarizer(provider, cutoff=-1)


async def test_summaries_made_from_a_snapshot_apply_to_the_grown_conversation() -> None:
    messages = session(21)
    provider = GatedProvider(summaries(10))
    summarizer = ToolPairSummarizer(provider, cutoff=10)
    summarizer.maybe_schedule(messages, protect_last_n=0)
    await provider.started.wait()
    grown = [*messages, *tool_loop(2, start=21)]  # the model kept working meanwhile
    provider.gate.set()
    await summarizer.collect()
    application = summarizer.apply_ready(grown)
    assert len(application.ids("applied")) == 10
    assert application.messages[: len(grown)][-1].id == grown[-1].id
    assert view_issues(application.messages) == []
