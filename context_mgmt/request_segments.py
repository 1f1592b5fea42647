"""A request as the cost model sees it: one `Segment` per message, keyed by content.

`providers.cache_cost` prices requests made of segments; this module turns what gosling
actually sends (system prompt, tools, the agent view with the per-turn context) into them:
the system prompt and the tools are the first segment, then each message with its token
count (`TokenCounter.count_message`, so the segments add up to `count_chat`) and a key that
is a hash of its role and content as sent. A masked output, a summary replacing a pair or the
per-turn context appended to the last message all change a key, and so break the cached
prefix from that message on, exactly as they would at the provider.

Breakpoints follow `providers/anthropic.py`: the system prompt, and the last message of each
of the last two user turns (consecutive messages of one role form one turn; messages with
nothing to send are left out of turns; a per-turn context message never carries one). After
the user's own text the block is part of that message (`with_turn_context`), so there the
breakpoint covers it and the next request writes the user's text to the cache once more.
Other mechanisms need no breakpoints.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from gosling.context_mgmt.tokens import REPLY_PRIMER_TOKENS, SYSTEM_OVERHEAD, TokenCounter
from gosling.conversation import (
    TURN_CONTEXT_KIND,
    Message,
    RedactedThinkingContent,
    SystemNotification,
    TextContent,
    ThinkingContent,
)
from gosling.providers.base import ToolSpec
from gosling.providers.cache_cost import Request, Segment
from gosling.providers.prompt_cache import CacheMechanism

ANTHROPIC_USER_BREAKPOINTS = 2
"""gosling marks the last two user turns (`providers/anthropic.py`)."""
_KEY_CACHE_SIZE = 65_536


def content_digest(value: Any) -> str:
    """A short key for JSON-able content: equal content, equal key."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _sends_something(message: Message) -> bool:
    """Whether the Anthropic adapter sends any block for `message` (empty ones are dropped)."""
    for part in message.content:
        if isinstance(part, TextContent):
            if part.text.strip():
                return True
        elif isinstance(part, ThinkingContent | RedactedThinkingContent):
            if message.role == "assistant":
                return True
        elif not isinstance(part, SystemNotification):
            return True
    return False


def anthropic_breakpoints(messages: Sequence[Message]) -> set[int]:
    """Indices of the messages whose last block carries a cache breakpoint: the last message
    of each of the last two user turns that is not per-turn context (`TURN_CONTEXT_KIND`),
    and a user message marked as the request's cache anchor."""
    anchors = {
        i
        for i, m in enumerate(messages)
        if m.metadata.cache_anchor and m.role == "user" and _sends_something(m)
    }
    turn_ends: list[int | None] = []
    previous_role: str | None = None
    for index, message in enumerate(messages):
        if not _sends_something(message):
            continue
        mark = None if message.metadata.kind == TURN_CONTEXT_KIND else index
        if message.role == previous_role and message.role == "user":
            if mark is not None:
                turn_ends[-1] = mark
        elif message.role == "user":
            turn_ends.append(mark)
        previous_role = message.role
    marked = [end for end in turn_ends if end is not None]
    return set(marked[-ANTHROPIC_USER_BREAKPOINTS:]) | anchors


class RequestSegmenter:
    """Builds `Request`s from what gosling sends; keys are memoised per message content."""

    def __init__(self, counter: TokenCounter, mechanism: CacheMechanism) -> None:
        self.counter = counter
        self.mechanism = mechanism
        self._keys: dict[int, tuple[object, str]] = {}

    def message_key(self, message: Message) -> str:
        content = message.content
        hit = self._keys.get(id(content))
        if hit is not None and hit[0] is content:
            return hit[1]
        parts = [part.model_dump(mode="json") for part in content]
        key = content_digest([message.role, parts])
        if len(self._keys) >= _KEY_CACHE_SIZE:
            del self._keys[next(iter(self._keys))]
        self._keys[id(content)] = (content, key)
        return key

    def system_segment(self, system: str, tools: Sequence[ToolSpec]) -> Segment:
        tokens = (self.counter.count_text(system) + SYSTEM_OVERHEAD if system else 0) + (
            self.counter.count_tools(tools) + REPLY_PRIMER_TOKENS
        )
        specs = [[t.name, t.description, t.input_schema] for t in tools]
        return Segment(
            content_digest([system, specs]), tokens, breakpoint=self.mechanism == "breakpoints"
        )

    def request(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        output_tokens: int = 0,
    ) -> Request:
        """One request: the system segment, then one segment per agent-visible message."""
        sent = [m for m in messages if m.metadata.agent_visible]
        marked = anthropic_breakpoints(sent) if self.mechanism == "breakpoints" else set()
        segments = [self.system_segment(system, tools)]
        segments.extend(
            Segment(self.message_key(m), self.counter.count_message(m), breakpoint=i in marked)
            for i, m in enumerate(sent)
        )
        return Request(tuple(segments), output_tokens)
