"""The bench's scripted loop and its baseline policies behave as documented."""

from __future__ import annotations

from bench.cost_loop import (
    CODEX_COMPACT_AT,
    OUTPUT_BYTES,
    SUMMARY_TOKENS,
    TASK,
    codex_requests,
    gosling_sent,
    none_requests,
    recorded_requests,
    scripted_loop,
)
from gosling.context_mgmt.request_segments import RequestSegmenter
from gosling.context_mgmt.tokens import TokenCounter
from gosling.conversation import fix_conversation
from gosling.providers.cache_cost import price_requests, total_cost
from gosling.providers.prompt_cache import OPENAI_CACHE


def test_the_loop_is_a_valid_conversation_with_8_kb_outputs() -> None:
    messages = scripted_loop(12)
    assert fix_conversation(messages[:-1])[1] == []  # a view ends before the final reply
    assert messages[-1].role == "assistant" and not messages[-1].tool_requests
    outputs = [p.text() for m in messages for p in m.tool_responses]
    assert len(outputs) == 12 and all(len(o.encode()) == OUTPUT_BYTES for o in outputs)
    assert len(set(outputs)) == 12
    again = scripted_loop(12)
    assert [m.content for m in again] == [m.content for m in messages]


def test_codex_keeps_everything_until_90_percent_then_restarts_from_the_summary() -> None:
    counter = TokenCounter()
    segmenter = RequestSegmenter(counter, "prefix")
    conversation = scripted_loop(30)
    window = 30_000
    requests, compactions = codex_requests(
        conversation, segmenter, "You are an agent.", (), window=window
    )
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
    nothing_dropped = none_requests(conversation, segmenter, "You are an agent.", ())
    assert len(nothing_dropped) == 31
    assert (
        total_cost(price_requests(requests, OPENAI_CACHE)).sent
        < total_cost(price_requests(nothing_dropped, OPENAI_CACHE)).sent
    )


def test_gosling_is_priced_from_the_requests_its_loop_sent() -> None:
    counter = TokenCounter()
    conversation = scripted_loop(6)
    sent = gosling_sent(6)
    assert len(sent) == 7
    assert sent[0].messages[0].text.startswith(TASK)
    requests = recorded_requests(sent, conversation, RequestSegmenter(counter, "breakpoints"))
    for request, recorded in zip(requests, sent, strict=True):
        assert request.tokens == counter.count_chat(
            recorded.system, recorded.messages, recorded.tools
        )
    assert [r.output_tokens for r in requests] == [
        counter.count_message(m) for m in conversation if m.role == "assistant"
    ]
