"""Requests as the cost model sees them match what gosling sends and where it caches."""

from __future__ import annotations

from typing import Any

from gosling.context_mgmt.request_segments import RequestSegmenter, anthropic_breakpoints
from gosling.context_mgmt.tokens import TokenCounter
from gosling.context_mgmt.turn_context import with_turn_context
from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse
from gosling.providers.anthropic import to_wire_messages
from gosling.providers.base import ToolSpec
from gosling.providers.cache_cost import price_requests
from gosling.providers.prompt_cache import ANTHROPIC_CACHE, OPENAI_CACHE


def call(i: int) -> Message:
    return Message.assistant(f"step {i}", ToolRequest(id=f"c{i}", name="shell", arguments={}))


def result(i: int, text: str | None = None) -> Message:
    body = text or f"output of step {i} " * 200
    return Message.user(None, ToolResponse(id=f"c{i}", content=(TextContent(text=body),)))


def conversation(steps: int) -> list[Message]:
    messages = [Message.user("Fix the build.")]
    for i in range(steps):
        messages += [call(i), result(i)]
    return messages


def anchored(messages: list[Message], index: int) -> list[Message]:
    """`messages` with the one at `index` marked as the request's cache anchor."""
    marked = messages[index].metadata.model_copy(update={"cache_anchor": True})
    return [*messages[:index], messages[index].with_metadata(marked), *messages[index + 1 :]]


def _marker(block: dict[str, Any]) -> str:
    return str(block.get("tool_use_id") or block.get("text"))


def _last_marker(message: Message) -> str:
    part = message.content[-1]
    return part.id if isinstance(part, ToolResponse) else message.text


def test_breakpoints_are_the_ones_the_anthropic_adapter_sets() -> None:
    hint = Message.user("Hints from sub/AGENTS.md: run make.").agent_only()
    cases = [
        conversation(1),
        conversation(4),
        [*conversation(3), hint],
        [*conversation(2), Message.assistant("Done."), Message.user("Thanks, now ship it.")],
        with_turn_context(conversation(3), "<info>time: now</info>"),
        anchored(conversation(6), 4),
        anchored(conversation(6), 12),  # the anchor is also one of the last two user turns
    ]
    for messages in cases:
        wire = to_wire_messages(messages)
        expected = [
            _marker(block) for turn in wire for block in turn["content"] if "cache_control" in block
        ]
        ours = [_last_marker(messages[i]) for i in sorted(anthropic_breakpoints(messages))]
        assert ours == expected


def test_segments_add_up_to_the_request_count() -> None:
    counter = TokenCounter()
    tools = [ToolSpec("shell", "Run a command.", {"type": "object", "properties": {}})]
    messages = conversation(3)
    request = RequestSegmenter(counter, "breakpoints").request("You are gosling.", messages, tools)
    assert request.tokens == counter.count_chat("You are gosling.", messages, tools)
    assert len(request.segments) == 1 + len(messages)
    # the system prompt, then the tool results of steps 1 and 2 (the last two user turns)
    marked = [i for i, s in enumerate(request.segments) if s.breakpoint]
    assert marked == [0, 5, 7]


def test_masking_an_old_output_reprices_everything_after_it() -> None:
    counter = TokenCounter()
    segmenter = RequestSegmenter(counter, "prefix")
    before = conversation(6)
    after = [*before[:4], result(1, "[output of c1 hidden; context__recall('c1')]"), *before[5:]]
    requests = [segmenter.request("system " * 300, m) for m in (before, after)]
    costs = price_requests(requests, OPENAI_CACHE)
    suffix = sum(s.tokens for s in requests[1].segments[5:])  # from the masked message on
    assert requests[1].tokens - costs[1].cache_read >= suffix
    assert requests[1].tokens - costs[1].cache_read < suffix + OPENAI_CACHE.block_tokens


def test_the_per_turn_context_stays_out_of_the_cached_prefix() -> None:
    counter = TokenCounter()
    segmenter = RequestSegmenter(counter, "breakpoints")
    system = "You are gosling. " * 300
    turns = [with_turn_context(conversation(n), f"<info>call {n}</info>") for n in (3, 4, 5)]
    requests = [segmenter.request(system, m) for m in turns]
    costs = price_requests(requests, ANTHROPIC_CACHE)
    # The block follows the last breakpoint (on step n-1's result), so call 5 reads
    # everything call 4 sent except its block, and writes only step 4 (its call and result).
    read_up_to = sum(s.tokens for s in requests[2].segments[: 1 + 1 + 2 * 4])
    block = requests[2].segments[-1].tokens
    assert costs[2].cache_read == read_up_to
    assert costs[2].cache_write == requests[2].tokens - read_up_to - block
    # every tool output is written to the cache once over the three calls
    step_3 = sum(s.tokens for s in requests[1].segments[1 + 1 + 2 * 3 : 1 + 1 + 2 * 4])
    assert costs[1].cache_write == step_3
