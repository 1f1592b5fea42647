"""Request bodies as the cost model sees them (issue 30): what the wire carried, priced.

`bench.cost_loop` prices the requests a real `gosling run` sent. Each body the fake server
received (Anthropic Messages or OpenAI Chat Completions JSON) becomes a
`providers.cache_cost.Request` whose tokens are o200k tokens of the texts the body holds
(`text_tokens`: every string but the model name and the wire format's own words), so what is
priced and what the wire carried are one count, split into segments:

- Anthropic (`breakpoints`): everything before the messages (tools and system prompt) is one
  segment, then each content block of each message is one: the cache matches whole blocks,
  and gosling's breakpoint sits on a tool result block with the per-turn context block after
  it in the same message. A segment is a breakpoint where the body put `cache_control`.
- OpenAI Chat (`prefix`): everything before the messages (the tools), then one segment per
  message (the system prompt is the first).

Keys are digests of the content as sent, `cache_control` left out: moving a breakpoint
changes no cached content. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from gosling.context_mgmt.request_segments import ANTHROPIC_USER_BREAKPOINTS, content_digest
from gosling.providers.cache_cost import Request, Segment

Api = Literal["anthropic", "chat"]
Body = Mapping[str, Any]
WireMessage = Mapping[str, Any]
Count = Callable[[str], int]

TURN_CONTEXT_OPEN = "<turn-context>"
"""How gosling's per-turn context block starts (`context_mgmt/turn_context.py`)."""
COMPACTION_OPEN = "<compaction-request>"
"""How gosling's compaction request starts (`prompts/templates/compaction_prefix.md`)."""
_NOT_READ = frozenset({"model", "role", "type", "stream", "tool_choice", "cache_control", "id"})
"""Keys whose strings are the wire format's own (or the model name), not text to read."""


def text_tokens(value: Any, count: Count) -> int:
    """o200k tokens of every string in `value` except under `_NOT_READ` keys: what the model
    is given to read."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += count(item)
        elif isinstance(item, dict):
            stack.extend(v for k, v in item.items() if k not in _NOT_READ)
        elif isinstance(item, list):
            stack.extend(item)
    return total


def without_cache_control(value: Any) -> Any:
    """`value` with every `cache_control` entry dropped (a copy)."""
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(v) for v in value]
    return value


def _has_cache_control(value: Any) -> bool:
    if isinstance(value, dict):
        return "cache_control" in value or any(_has_cache_control(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_cache_control(v) for v in value)
    return False


# -- segments -----------------------------------------------------------------------------------


def head_segment(body: Body, api: Api, count: Count) -> Segment:
    """Everything before the messages: its tokens, keyed by the system prompt and tools."""
    head = {k: v for k, v in body.items() if k != "messages"}
    prompt = without_cache_control([head.get("system"), head.get("tools")])
    marked = api == "anthropic" and _has_cache_control(head)
    return Segment(content_digest(prompt), text_tokens(head, count), marked)


def _units(message: WireMessage, api: Api) -> list[Any]:
    """What the cache matches as a whole: Anthropic's blocks, else the message."""
    content = message.get("content")
    if api == "anthropic" and isinstance(content, list):
        return content
    return [message]


def message_segments(message: WireMessage, api: Api, count: Count) -> list[Segment]:
    role = message.get("role")
    segments = []
    for position, unit in enumerate(_units(message, api)):
        key = content_digest([role, position == 0, without_cache_control(unit)])
        marked = api == "anthropic" and isinstance(unit, dict) and "cache_control" in unit
        segments.append(Segment(key, text_tokens(unit, count), marked))
    return segments


def body_request(body: Body, api: Api, count: Count, output_tokens: int = 0) -> Request:
    """One request body as sent, breakpoints where the body put them."""
    segments = [head_segment(body, api, count)]
    for message in body.get("messages") or ():
        segments.extend(message_segments(message, api, count))
    return Request(tuple(segments), output_tokens)


def user_turn_ends(messages: Sequence[WireMessage]) -> list[int]:
    """Index of the last message of each user turn (consecutive user messages are one)."""
    ends: list[int] = []
    previous = None
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "user" and previous == "user":
            ends[-1] = index
        elif role == "user":
            ends.append(index)
        previous = role
    return ends


class WireSegmenter:
    """Requests built from messages a policy chose (the baselines), each message's segments
    counted once; for Anthropic the breakpoints go where gosling puts them (the head and the
    last block of each of the last two user turns)."""

    def __init__(self, api: Api, count: Count) -> None:
        self.api = api
        self.count = count
        self._known: dict[int, tuple[WireMessage, list[Segment]]] = {}

    def segments(self, message: WireMessage) -> list[Segment]:
        hit = self._known.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        segments = message_segments(without_cache_control(message), self.api, self.count)
        self._known[id(message)] = (message, segments)
        return segments

    def request(
        self, head: Segment, messages: Sequence[WireMessage], output_tokens: int = 0
    ) -> Request:
        marked = set(user_turn_ends(messages)[-ANTHROPIC_USER_BREAKPOINTS:])
        if self.api != "anthropic":
            marked = set()
        segments = [replace(head, breakpoint=self.api == "anthropic")]
        for index, message in enumerate(messages):
            parts = self.segments(message)
            if index in marked and parts:
                parts = [*parts[:-1], replace(parts[-1], breakpoint=True)]
            segments.extend(parts)
        return Request(tuple(segments), output_tokens)


# -- reading messages ---------------------------------------------------------------------------


def _is_turn_context(unit: Any) -> bool:
    if not isinstance(unit, dict):
        return False
    text = unit.get("text") if unit.get("type") == "text" else unit.get("content")
    return isinstance(text, str) and text.startswith(TURN_CONTEXT_OPEN)


def without_turn_context(message: WireMessage, api: Api) -> WireMessage | None:
    """`message` without gosling's per-turn context (None when nothing else is left)."""
    if message.get("role") != "user":
        return message
    content = message.get("content")
    if api == "anthropic" and isinstance(content, list):
        kept = [block for block in content if not _is_turn_context(block)]
        return {**message, "content": kept} if kept else None
    return None if _is_turn_context(message) else message


def _blocks(message: WireMessage, kind: str) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind]


def tool_result_ids(message: WireMessage, api: Api) -> list[str]:
    if api == "anthropic":
        return [str(b.get("tool_use_id")) for b in _blocks(message, "tool_result")]
    return [str(message.get("tool_call_id"))] if message.get("role") == "tool" else []


def tool_call_ids(message: WireMessage, api: Api) -> list[str]:
    if api == "anthropic":
        return [str(b.get("id")) for b in _blocks(message, "tool_use")]
    return [str(call.get("id")) for call in message.get("tool_calls") or ()]


def conversation(body: Body, api: Api) -> list[WireMessage]:
    """The body's messages without the per-turn context."""
    kept = (without_turn_context(m, api) for m in body.get("messages") or ())
    return [m for m in kept if m is not None]


def asks_for_compaction(body: Body) -> bool:
    """Whether the request ends with gosling's compaction request (the prefix form: the
    session's own prefix, then the request, `prompts/templates/compaction_prefix.md`)."""
    messages: Sequence[WireMessage] = body.get("messages") or []
    return bool(messages) and COMPACTION_OPEN in message_text(messages[-1])


def _results_only(message: WireMessage, api: Api) -> WireMessage | None:
    """The tool results `message` carries, alone (None: it carries none)."""
    if api == "anthropic":
        results = _blocks(message, "tool_result")
        return {**message, "content": results} if results else None
    return message if message.get("role") == "tool" else None


def call_and_result(body: Body, api: Api, call: str) -> list[WireMessage] | None:
    """The assistant message that made `call` and the tool results after it, as the body
    carries them, without anything gosling joined to them (per-turn context, notices, a
    compaction request) and without breakpoints; None when the body has not both."""
    messages: Sequence[WireMessage] = body.get("messages") or []
    for index, message in enumerate(messages):
        if call not in tool_call_ids(message, api):
            continue
        results = []
        for later in messages[index + 1 :]:
            kept = _results_only(later, api)
            if kept is None:
                break
            results.append(kept)
        if not results:
            return None
        return [without_cache_control(m) for m in (message, *results)]
    return None


def is_plain_user(message: WireMessage, api: Api) -> bool:
    """A message the user wrote: role user, no tool results."""
    return message.get("role") == "user" and not tool_result_ids(message, api)


def message_text(message: WireMessage) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))


def user_text(text: str, api: Api) -> WireMessage:
    """A user message of plain text, as each API carries it."""
    if api == "anthropic":
        return {"role": "user", "content": [{"type": "text", "text": text}]}
    return {"role": "user", "content": text}
