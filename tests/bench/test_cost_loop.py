"""The bench's scripted loop, its baseline policies, and that the cost loop prices what the
wire carried (issue 30)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.bench_cost import _loop
from bench.cost_loop import (
    CODEX_COMPACT_AT,
    OUTPUT_BYTES,
    SUMMARY_TOKENS,
    TASK,
    WireHistory,
    call_id,
    codex_requests,
    none_requests,
    policy_figures,
    scripted_loop,
    shell_output,
)
from bench.wire_loop import reply_tokens, run_loop, step_turn
from bench.wire_requests import WireSegmenter, head_segment, text_tokens, user_text
from gosling.context_mgmt.tokens import TokenCounter
from gosling.conversation import fix_conversation
from gosling.providers.cache_cost import price_requests, total_cost
from gosling.providers.prompt_cache import ANTHROPIC_CACHE, OPENAI_CACHE, CacheFamily
from tests.fakes import RecordedRequest

SYSTEM = {"system": [{"type": "text", "text": "You are an agent."}], "tools": []}


def test_the_loop_is_a_valid_conversation_with_8_kb_outputs() -> None:
    messages = scripted_loop(12)
    assert fix_conversation(messages[:-1])[1] == []  # a view ends before the final reply
    assert messages[-1].role == "assistant" and not messages[-1].tool_requests
    outputs = [p.text() for m in messages for p in m.tool_responses]
    assert len(outputs) == 12 and all(len(o.encode()) == OUTPUT_BYTES for o in outputs)
    assert len(set(outputs)) == 12
    again = scripted_loop(12)
    assert [m.content for m in again] == [m.content for m in messages]


def _anthropic_history(steps: int, count: Any) -> WireHistory:
    """The loop in Anthropic's wire shape, without running gosling."""
    history = WireHistory("anthropic", head_segment(SYSTEM, "anthropic", count))
    history.task.append(user_text(TASK, "anthropic"))
    for step in range(steps):
        call = {"type": "tool_use", "id": call_id(step), "name": "developer__shell", "input": {}}
        result = {
            "type": "tool_result",
            "tool_use_id": call_id(step),
            "content": shell_output(step),
        }
        history.steps.append(
            [{"role": "assistant", "content": [call]}, {"role": "user", "content": [result]}]
        )
        history.replies.append(20)
    history.replies.append(12)
    return history


def test_codex_keeps_everything_until_90_percent_then_restarts_from_the_summary() -> None:
    count = TokenCounter().count_text
    segmenter = WireSegmenter("anthropic", count)
    history = _anthropic_history(30, count)
    window = 30_000
    requests, compactions = codex_requests(history, segmenter, window=window)
    summaries = [r for r in requests if r.output_tokens == SUMMARY_TOKENS]
    assert compactions == len(summaries) >= 2
    for index, request in enumerate(requests):
        if request.output_tokens == SUMMARY_TOKENS:
            # the summarization call carries the whole history, over the threshold ...
            assert request.tokens > CODEX_COMPACT_AT * window
            # ... and the next call starts over from the task and the summary
            after = requests[index + 1]
            assert len(after.segments) == 1 + 2
        else:
            assert request.tokens <= CODEX_COMPACT_AT * window
    assert len(requests) == 31 + compactions
    nothing_dropped = none_requests(history, segmenter)
    assert len(nothing_dropped) == 31
    assert [r.output_tokens for r in nothing_dropped] == history.replies
    assert (
        total_cost(price_requests(requests, OPENAI_CACHE)).sent
        < total_cost(price_requests(nothing_dropped, OPENAI_CACHE)).sent
    )


def test_the_baselines_mark_the_system_prompt_and_the_last_two_user_turns() -> None:
    count = TokenCounter().count_text
    history = _anthropic_history(4, count)
    last = none_requests(history, WireSegmenter("anthropic", count))[-1]
    marked = [i for i, s in enumerate(last.segments) if s.breakpoint]
    # head, task, then (call, result) per step: the last two results carry the breakpoints
    assert marked == [0, len(last.segments) - 3, len(last.segments) - 1]
    assert not any(
        s.breakpoint for s in none_requests(history, WireSegmenter("chat", count))[-1].segments[1:]
    )


@pytest.mark.parametrize(
    ("family", "cache"), [("anthropic", ANTHROPIC_CACHE), ("openai", OPENAI_CACHE)]
)
def test_the_loop_is_priced_from_what_the_wire_carried(family: CacheFamily, cache: Any) -> None:
    bodies: list[Any] = []

    def keep(request: RecordedRequest) -> None:
        bodies.append(request.body)

    steps = 4
    run = run_loop(steps, family, on_request=keep)
    assert run.served == len(bodies) == len(run.requests) == steps + 1
    assert run.summaries == 0
    count = TokenCounter().count_text  # a counter of its own, over the bodies whole
    wire = [text_tokens(body, count) for body in bodies]
    assert [r.tokens for r in run.requests] == wire
    assert run.wire_text_tokens == sum(wire) == policy_figures(run.requests, cache)["tokens_sent"]
    # the usage reported is each body's tokens, the prefix shared with earlier ones cached
    for usage, tokens in zip(run.reported, wire, strict=True):
        assert (
            usage.input_tokens or 0
        ) + usage.cache_read_tokens + usage.cache_write_tokens == tokens
    # (Anthropic: the first request's breakpoint is on its per-turn context, which the
    # second no longer carries there, so reads start with the third)
    assert all(u.cache_read_tokens > 0 for u in run.reported[2:])
    assert [u.output_tokens for u in run.reported] == [
        reply_tokens(step_turn(step, steps), count) for step in range(steps + 1)
    ]
    assert TASK in json.dumps(bodies[0]["messages"])  # the real CLI sent the task
    # the baselines' history is the loop as first sent: every result whole
    assert len(run.history.steps) == steps and run.history.replies == [
        u.output_tokens for u in run.reported
    ]
    for step, messages in enumerate(run.history.steps):
        assert json.dumps(shell_output(step))[1:-1] in json.dumps(messages[-1])


def test_bench_cost_states_wire_tokens_beside_what_it_priced() -> None:
    result = _loop(3)
    for family in ("anthropic", "openai"):
        figures = result[family]
        check = figures["wire"]
        assert check["priced_over_wire"] == 1.0
        assert (
            figures["gosling"]["tokens_sent"] == check["wire_text_tokens"] == check["priced_tokens"]
        )
        assert figures["gosling"]["calls"] == check["requests"] == 4
        assert figures["none"]["calls"] == figures["codex"]["calls"] == 4


def test_a_compaction_is_answered_with_a_summary_and_priced_like_any_request() -> None:
    steps = 8
    run = run_loop(steps, "anthropic", window=12_000)  # small: gosling compacts on the way
    assert run.summaries >= 1
    assert run.served == len(run.requests) == steps + 1 + run.summaries
    assert run.wire_text_tokens == sum(r.tokens for r in run.requests)
    # the baselines still get every call and result, those a compaction took away too
    assert len(run.history.steps) == steps and len(run.history.replies) == steps + 1
