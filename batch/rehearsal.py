"""One streamed reply per SDK, decoded from canned bytes, never sent anywhere.

An SDK builds the validators of its stream events the first time it decodes one (about
0.1 s of CPU for the Anthropic SDK). A worker pays that on its first model call unless the
process it was forked from has already done it; this rehearsal does it there, through the
SDK's public client on an in-memory transport.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

_USAGE = {
    "input_tokens": 1,
    "output_tokens": 1,
    "cache_read_input_tokens": 0,
    "cache_creation_input_tokens": 0,
}
ANTHROPIC_EVENTS: tuple[dict[str, Any], ...] = (
    {
        "type": "message_start",
        "message": {
            "id": "msg_rehearsal",
            "type": "message",
            "role": "assistant",
            "model": "rehearsal",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": _USAGE,
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
    {"type": "content_block_stop", "index": 0},
    {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "tool_use", "id": "toolu_r", "name": "view", "input": {}},
    },
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": "{}"},
    },
    {"type": "content_block_stop", "index": 1},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 2},
    },
    {"type": "message_stop"},
)

_CHUNK = {"id": "chatcmpl-r", "object": "chat.completion.chunk", "created": 0, "model": "r"}
OPENAI_CHAT_CHUNKS: tuple[dict[str, Any], ...] = (
    {**_CHUNK, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"}}]},
    {
        **_CHUNK,
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_r",
                            "type": "function",
                            "function": {"name": "view", "arguments": "{}"},
                        }
                    ]
                },
            }
        ],
    },
    {**_CHUNK, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    {
        **_CHUNK,
        "choices": [],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    },
)


def _sse(events: tuple[dict[str, Any], ...], *, named: bool, done: bool) -> bytes:
    text = "".join(
        (f"event: {e['type']}\n" if named else "") + f"data: {json.dumps(e)}\n\n" for e in events
    )
    return (text + ("data: [DONE]\n\n" if done else "")).encode()


def _transport(body: bytes) -> Any:
    import httpx2

    def reply(request: Any) -> Any:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return httpx2.AsyncClient(transport=httpx2.MockTransport(reply))


async def _anthropic() -> None:
    import anthropic

    body = _sse(ANTHROPIC_EVENTS, named=True, done=False)
    client = anthropic.AsyncAnthropic(
        api_key="rehearsal", base_url="http://rehearsal.invalid", http_client=_transport(body)
    )
    async with client:
        stream = await client.messages.create(
            model="rehearsal",
            max_tokens=1,
            messages=[{"role": "user", "content": "rehearsal"}],
            stream=True,
        )
        async with stream:
            async for event in stream:
                event.to_dict()


async def _openai() -> None:
    import openai

    body = _sse(OPENAI_CHAT_CHUNKS, named=False, done=True)
    client = openai.AsyncOpenAI(
        api_key="rehearsal", base_url="http://rehearsal.invalid", http_client=_transport(body)
    )
    async with client:
        stream = await client.chat.completions.create(
            model="rehearsal", messages=[{"role": "user", "content": "rehearsal"}], stream=True
        )
        async with stream:
            async for chunk in stream:
                chunk.to_dict()


REHEARSALS: dict[str, Callable[[], Awaitable[None]]] = {
    "anthropic": _anthropic,
    "openai": _openai,
}


def rehearse(sdks: tuple[str, ...]) -> None:
    """Decode one canned stream with each SDK. Best effort: a failure here (an SDK that
    changed its events) only means the worker pays the first decode itself."""

    async def all_of_them() -> None:
        for sdk in sdks:
            try:
                await REHEARSALS[sdk]()
            except Exception:
                continue

    asyncio.run(all_of_them())
