"""How a scripted `Turn` looks on each wire: SSE frames in the exact orders of
reference/ecosystem.md §3.2, and the non-streamed bodies. Errors are in faults.py."""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from tests.fakes.script import FakeUsage, Turn

Api = Literal["anthropic", "chat", "responses"]
Frame = tuple[str | None, str]
"""(SSE event name or None, data line)."""


@dataclass
class RenderContext:
    model: str
    request_bytes: int = 0
    include_usage: bool = False
    include_encrypted_reasoning: bool = False
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    created: int = field(default_factory=lambda: int(time.time()))

    def new_id(self, prefix: str) -> str:
        return f"{prefix}fake{next(self.ids)}"


def resolve_usage(turn: Turn, ctx: RenderContext) -> FakeUsage:
    """The turn's usage; missing counts are estimated (4 bytes a token) from the request and
    the reply, so growing conversations report growing numbers."""
    given = turn.usage or FakeUsage()
    produced = (
        len(turn.text) + len(turn.thinking) + sum(len(t.arguments_json()) for t in turn.tool_calls)
    )
    return FakeUsage(
        input_tokens=given.input_tokens
        if given.input_tokens is not None
        else max(1, ctx.request_bytes // 4),
        output_tokens=given.output_tokens
        if given.output_tokens is not None
        else max(1, produced // 4),
        cache_read_tokens=given.cache_read_tokens,
        cache_write_tokens=given.cache_write_tokens,
    )


def _halves(text: str) -> list[str]:
    middle = len(text) // 2
    return [p for p in (text[:middle], text[middle:]) if p]


def _tool_id(ctx: RenderContext, given: str | None, prefix: str) -> str:
    return given if given is not None else ctx.new_id(prefix)


# -- Anthropic Messages -------------------------------------------------------------------------

_ANTHROPIC_STOP = {"end": "end_turn", "tool_use": "tool_use", "max_tokens": "max_tokens"}


def anthropic_content(turn: Turn, ctx: RenderContext) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if turn.thinking:
        blocks.append({"type": "thinking", "thinking": turn.thinking, "signature": turn.signature})
    blocks.extend({"type": "redacted_thinking", "data": data} for data in turn.redacted_thinking)
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    for call in turn.tool_calls:
        call_id = _tool_id(ctx, call.id, "toolu_")
        blocks.append(
            {"type": "tool_use", "id": call_id, "name": call.name, "input": dict(call.arguments)}
        )
    return blocks


def _anthropic_usage(usage: FakeUsage, output: int | None) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": output,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
    }


def anthropic_message(turn: Turn, ctx: RenderContext) -> dict[str, Any]:
    usage = resolve_usage(turn, ctx)
    return {
        "id": ctx.new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": anthropic_content(turn, ctx),
        "stop_reason": _ANTHROPIC_STOP[turn.stop_reason],
        "stop_sequence": None,
        "usage": _anthropic_usage(usage, usage.output_tokens),
    }


def anthropic_stream(turn: Turn, ctx: RenderContext) -> list[Frame]:
    usage = resolve_usage(turn, ctx)
    frames: list[Frame] = []

    def emit(event: str, **data: Any) -> None:
        frames.append((event, json.dumps({"type": event, **data})))

    message = anthropic_message(turn, ctx)
    start = {**message, "content": [], "stop_reason": None, "usage": _anthropic_usage(usage, 1)}
    emit("message_start", message=start)
    emit("ping")
    for index, block in enumerate(message["content"]):
        kind = block["type"]
        if kind == "thinking":
            emit(
                "content_block_start",
                index=index,
                content_block={"type": "thinking", "thinking": "", "signature": ""},
            )
            for piece in _halves(block["thinking"]):
                emit(
                    "content_block_delta",
                    index=index,
                    delta={"type": "thinking_delta", "thinking": piece},
                )
            emit(
                "content_block_delta",
                index=index,
                delta={"type": "signature_delta", "signature": block["signature"]},
            )
        elif kind == "redacted_thinking":
            emit("content_block_start", index=index, content_block=block)
        elif kind == "text":
            emit("content_block_start", index=index, content_block={"type": "text", "text": ""})
            for piece in turn.text_chunks():
                emit(
                    "content_block_delta", index=index, delta={"type": "text_delta", "text": piece}
                )
        else:
            call = turn.tool_calls[
                [b["type"] for b in message["content"]][:index].count("tool_use")
            ]
            emit("content_block_start", index=index, content_block={**block, "input": {}})
            for piece in ["", *call.argument_chunks()]:
                emit(
                    "content_block_delta",
                    index=index,
                    delta={"type": "input_json_delta", "partial_json": piece},
                )
        emit("content_block_stop", index=index)
    emit(
        "message_delta",
        delta={"stop_reason": message["stop_reason"], "stop_sequence": None},
        usage={"output_tokens": usage.output_tokens},
    )
    emit("message_stop")
    return frames


# -- OpenAI Chat Completions --------------------------------------------------------------------

_CHAT_FINISH = {"end": "stop", "tool_use": "tool_calls", "max_tokens": "length"}


def _chat_usage(usage: FakeUsage) -> dict[str, Any]:
    prompt = (usage.input_tokens or 0) + usage.cache_read_tokens + usage.cache_write_tokens
    details: dict[str, Any] = {"cached_tokens": usage.cache_read_tokens}
    if usage.cache_write_tokens:
        details["cache_write_tokens"] = usage.cache_write_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + (usage.output_tokens or 0),
        "prompt_tokens_details": details,
    }


def _chat_finish(turn: Turn) -> str:
    if turn.stop_reason == "tool_use" and "finish_stop" in turn.quirks:
        return "stop"
    return _CHAT_FINISH[turn.stop_reason]


def chat_completion(turn: Turn, ctx: RenderContext) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if turn.thinking and "reasoning_content" in turn.quirks:
        message["reasoning_content"] = turn.thinking
    calls = []
    for call in turn.tool_calls:
        entry: dict[str, Any] = {
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments_json()},
        }
        if "no_ids" not in turn.quirks:
            entry["id"] = _tool_id(ctx, call.id, "call_")
        calls.append(entry)
    if calls:
        message["tool_calls"] = calls
    body: dict[str, Any] = {
        "id": ctx.new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": _chat_finish(turn)}
        ],
    }
    if "no_usage" not in turn.quirks:
        body["usage"] = _chat_usage(resolve_usage(turn, ctx))
    return body


def chat_stream(turn: Turn, ctx: RenderContext) -> list[Frame]:
    completion_id = ctx.new_id("chatcmpl-")
    frames: list[Frame] = []
    quirks = turn.quirks

    def emit(delta: dict[str, Any], finish: str | None = None) -> None:
        chunk: dict[str, Any] = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": ctx.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if ctx.include_usage:
            chunk["usage"] = None
        frames.append((None, json.dumps(chunk)))

    emit({"role": "assistant", "content": ""})
    if turn.thinking and "reasoning_content" in quirks:
        for piece in _halves(turn.thinking):
            emit({"reasoning_content": piece})
    for piece in turn.text_chunks():
        emit({"content": piece})
    for i, call in enumerate(turn.tool_calls):
        index = 0 if "index_zero" in quirks else i
        call_id = None if "no_ids" in quirks else _tool_id(ctx, call.id, "call_")
        head: dict[str, Any] = {"index": index, "type": "function"}
        if call_id is not None:
            head["id"] = call_id
        if "whole_arguments" in quirks:
            emit(
                {
                    "tool_calls": [
                        {
                            **head,
                            "function": {"name": call.name, "arguments": call.arguments_json()},
                        }
                    ]
                }
            )
            continue
        emit({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]})
        for piece in call.argument_chunks():
            if "repeat_ids" in quirks:
                fragment = {**head, "function": {"name": call.name, "arguments": piece}}
            else:
                fragment = {"index": index, "function": {"arguments": piece}}
            emit({"tool_calls": [fragment]})
    emit({}, _chat_finish(turn))
    if ctx.include_usage and "no_usage" not in quirks:
        usage_chunk = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": ctx.model,
            "choices": [],
            "usage": _chat_usage(resolve_usage(turn, ctx)),
        }
        frames.append((None, json.dumps(usage_chunk)))
    frames.append((None, "[DONE]"))
    return frames


# -- OpenAI Responses ---------------------------------------------------------------------------


def _responses_usage(usage: FakeUsage) -> dict[str, Any]:
    total_in = (usage.input_tokens or 0) + usage.cache_read_tokens + usage.cache_write_tokens
    return {
        "input_tokens": total_in,
        "input_tokens_details": {"cached_tokens": usage.cache_read_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": total_in + (usage.output_tokens or 0),
    }


def _response_shell(ctx: RenderContext, response_id: str) -> dict[str, Any]:
    return {
        "id": response_id,
        "object": "response",
        "created_at": ctx.created,
        "status": "in_progress",
        "model": ctx.model,
        "output": [],
        "usage": None,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "parallel_tool_calls": True,
        "temperature": 1.0,
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
    }


def response_output(turn: Turn, ctx: RenderContext) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if turn.thinking:
        reasoning: dict[str, Any] = {
            "type": "reasoning",
            "id": ctx.new_id("rs_"),
            "summary": [{"type": "summary_text", "text": turn.thinking}],
        }
        if ctx.include_encrypted_reasoning:
            reasoning["encrypted_content"] = f"enc:{turn.signature}"
        items.append(reasoning)
    if turn.text:
        items.append(
            {
                "type": "message",
                "id": ctx.new_id("msg_"),
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
            }
        )
    for call in turn.tool_calls:
        items.append(
            {
                "type": "function_call",
                "id": ctx.new_id("fc_"),
                "call_id": _tool_id(ctx, call.id, "call_"),
                "name": call.name,
                "arguments": call.arguments_json(),
                "status": "completed",
            }
        )
    return items


def response_object(
    turn: Turn, ctx: RenderContext, output: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    body = _response_shell(ctx, ctx.new_id("resp_"))
    body["output"] = output if output is not None else response_output(turn, ctx)
    body["usage"] = _responses_usage(resolve_usage(turn, ctx))
    if turn.stop_reason == "max_tokens":
        body["status"] = "incomplete"
        body["incomplete_details"] = {"reason": "max_output_tokens"}
    else:
        body["status"] = "completed"
    return body


def responses_stream(turn: Turn, ctx: RenderContext) -> list[Frame]:
    frames: list[Frame] = []
    sequence = itertools.count()

    def emit(event: str, **data: Any) -> None:
        frames.append(
            (event, json.dumps({"type": event, "sequence_number": next(sequence), **data}))
        )

    output = response_output(turn, ctx)
    final = response_object(turn, ctx, output)
    shell = {
        **final,
        "status": "in_progress",
        "output": [],
        "usage": None,
        "incomplete_details": None,
    }
    emit("response.created", response=shell)
    emit("response.in_progress", response=shell)
    for index, item in enumerate(output):
        kind = item["type"]
        if kind == "reasoning":
            emit(
                "response.output_item.added",
                output_index=index,
                item={"type": "reasoning", "id": item["id"], "summary": []},
            )
            ids = {"item_id": item["id"], "output_index": index, "summary_index": 0}
            emit(
                "response.reasoning_summary_part.added",
                **ids,
                part={"type": "summary_text", "text": ""},
            )
            for piece in _halves(turn.thinking):
                emit("response.reasoning_summary_text.delta", **ids, delta=piece)
            emit("response.reasoning_summary_text.done", **ids, text=turn.thinking)
            emit(
                "response.reasoning_summary_part.done",
                **ids,
                part={"type": "summary_text", "text": turn.thinking},
            )
        elif kind == "message":
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            )
            ids = {"item_id": item["id"], "output_index": index, "content_index": 0}
            emit(
                "response.content_part.added",
                **ids,
                part={"type": "output_text", "text": "", "annotations": []},
            )
            for piece in turn.text_chunks():
                emit("response.output_text.delta", **ids, delta=piece, logprobs=[])
            emit("response.output_text.done", **ids, text=turn.text, logprobs=[])
            emit("response.content_part.done", **ids, part=item["content"][0])
        else:
            call = turn.tool_calls[[o["type"] for o in output][:index].count("function_call")]
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "arguments": "", "status": "in_progress"},
            )
            ids = {"item_id": item["id"], "output_index": index}
            for piece in call.argument_chunks():
                emit("response.function_call_arguments.delta", **ids, delta=piece)
            emit(
                "response.function_call_arguments.done",
                **ids,
                arguments=item["arguments"],
                name=item["name"],
            )
        emit("response.output_item.done", output_index=index, item=item)
    emit(
        "response.incomplete" if final["status"] == "incomplete" else "response.completed",
        response=final,
    )
    return frames
