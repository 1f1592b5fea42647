"""Observation masking: old tool outputs become one-line placeholders, with no model call.

Tool outputs are most of an agent's tokens and go stale fast. Masking keeps every tool call
and its result in place (requests and responses stay paired, roles and order do not change)
and only swaps the *shown* content of old results for a placeholder that names the tool, its
arguments, the size of what was removed and how to get it back:

    [output of developer__shell {"command": "pytest -x"} hidden to save context: 212 lines,
    9,841 chars; call context__recall("call_abc") to see it]

Storage: the decision is the `masked` flag of a tool-result message's metadata; the original
content stays in that same message, so nothing is lost and `context_mgmt.recall` finds it.
`MaskingPresenter` shows flagged messages as placeholder copies, one message at a time, as
the session's view is built; it is the one place that turns a flag into what the model sees.

Prompt caching: masking changes the prompt, and everything after the first changed message
is paid again instead of read from the cache. So the session's pipeline does not mask on
every call: `context_mgmt.trim_plan` decides when masking (and folding the older
placeholders, `context_mgmt.folding`) pays under the provider's cache, and
`messages_to_mask_among` says which messages. `messages_to_mask` is the fixed rule
(the calls older than the last `keep_last`, in whole batches of `MASK_BATCH_SIZE`), kept
for scripts and benchmarks. A masked message stays masked, and its placeholder is a pure
function of the original, so the masked prefix itself is byte-stable from request to
request.

Old calls' long arguments go too: an assistant message whose calls are all old gets the flag
when one of its string arguments is longer than `ARGUMENT_KEEP_CHARS` (file contents written
with `write`, heredoc scripts), and the model is shown the head of each such argument with a
note of what was cut. The file is on disk, and `context__recall` shows the whole call.

Small outputs are not worth a placeholder: a response of at most `SMALL_OUTPUT_CHARS`
characters (and no image) is shown as is even inside a masked message. Error results keep
their first lines, because errors are what the model most needs to remember.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from gosling.context_mgmt.placeholder_keys import placeholder_keys
from gosling.context_mgmt.recall import describe_call, recall_hint
from gosling.conversation import ImageContent, Message, TextContent, ToolRequest, ToolResponse

MASK_KEEP_LAST = 10
"""Tool calls whose results always stay verbatim (config `mask_keep_last`)."""
MASK_BATCH_SIZE = 10
"""`messages_to_mask`'s fixed rule grows the masked set by whole batches of this many calls."""
SMALL_OUTPUT_CHARS = 400
"""Outputs up to this size are cheaper to keep than to replace."""
ERROR_LINES_KEPT = 3
ERROR_LINE_CHARS = 200
COPY_CACHE_SIZE = 16_384
ARGUMENT_KEEP_CHARS = 400
"""String arguments up to this size stay whole in masked calls (the head and the note that
replace a longer one take about 200 characters, so shorter cuts would not pay)."""
ARGUMENT_HEAD_CHARS = 80
"""How much of a longer argument the model still sees."""


def messages_to_mask(
    messages: Sequence[Message],
    keep_last: int = MASK_KEEP_LAST,
    batch: int = MASK_BATCH_SIZE,
) -> list[str]:
    """Ids of agent-visible messages to mask now, in fixed batches (pure; see the module
    docstring): the calls older than the last `keep_last`, once a whole `batch` of them
    has piled up. The session's pipeline decides the moment by cost instead
    (`context_mgmt.trim_plan`); this is the fixed rule, for scripts and the benchmark.
    """
    if keep_last < 0:
        raise ValueError(f"keep_last must be 0 or more, got {keep_last}")
    if batch < 1:
        raise ValueError(f"batch must be 1 or more, got {batch}")
    calls = [r.id for m in messages if m.metadata.agent_visible for r in m.tool_requests]
    old_count = (max(len(calls) - keep_last, 0) // batch) * batch
    if old_count == 0:
        return []
    return messages_to_mask_among(messages, set(calls[:old_count]))


def messages_to_mask_among(messages: Sequence[Message], old: Collection[str]) -> list[str]:
    """Ids of agent-visible messages that masking would shrink and that belong only to the
    `old` calls.

    A tool-result message qualifies when every response in it answers one of the old calls
    and masking would shrink one of its outputs; an assistant message when all its calls are
    old and one of them has a long string argument. Masked messages are not chosen again.
    """
    chosen: list[str] = []
    for message in messages:
        meta = message.metadata
        if not meta.agent_visible or meta.masked:
            continue
        if message.role == "user":
            parts: Sequence[ToolRequest | ToolResponse] = message.tool_responses
            worth = worth_masking(message)
        else:
            parts = message.tool_requests
            worth = has_long_arguments(message)
        if parts and worth and all(p.id in old for p in parts):
            chosen.append(message.id)
    return chosen


def worth_masking(message: Message) -> bool:
    """A placeholder would shrink one of this tool-result message's outputs."""
    return any(_worth_masking(r) for r in message.tool_responses)


def has_long_arguments(message: Message) -> bool:
    """One of this assistant message's calls has a string argument worth cutting."""
    return any(_long_arguments(r.arguments) for r in message.tool_requests)


def _long_arguments(value: object) -> bool:
    if isinstance(value, str):
        return len(value) > ARGUMENT_KEEP_CHARS
    if isinstance(value, dict):
        return any(_long_arguments(v) for v in value.values())
    if isinstance(value, list):
        return any(_long_arguments(v) for v in value)
    return False


def _cut_arguments(value: Any, call_id: str) -> Any:
    if isinstance(value, str) and len(value) > ARGUMENT_KEEP_CHARS:
        hidden = len(value) - ARGUMENT_HEAD_CHARS
        return (
            f"{value[:ARGUMENT_HEAD_CHARS]}…[{hidden:,} more chars hidden to save context; "
            f"{recall_hint(call_id)} shows the whole call]"
        )
    if isinstance(value, dict):
        return {k: _cut_arguments(v, call_id) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_arguments(v, call_id) for v in value]
    return value


def _worth_masking(response: ToolResponse) -> bool:
    if any(isinstance(p, ImageContent) for p in response.content):
        return True
    return len(response.text()) > SMALL_OUTPUT_CHARS


def masked_copy(message: Message, requests: Mapping[str, ToolRequest] | None = None) -> Message:
    """The message as the model is shown it once masked: each sizeable tool response holds a
    placeholder instead of its output, each long argument of a call only its head.
    `requests` maps call ids to their requests so a placeholder can name the tool and its
    arguments. Same id, role and metadata."""
    if message.role == "assistant":
        return message.with_content(
            part.model_copy(update={"arguments": _cut_arguments(part.arguments, part.id)})
            if isinstance(part, ToolRequest) and _long_arguments(part.arguments)
            else part
            for part in message.content
        )
    requests = requests or {}
    parts = [
        ToolResponse(
            id=part.id,
            content=(TextContent(text=placeholder(part, requests.get(part.id))),),
            is_error=part.is_error,
        )
        if isinstance(part, ToolResponse) and _worth_masking(part)
        else part
        for part in message.content
    ]
    return message.with_content(parts)


def placeholder(response: ToolResponse, request: ToolRequest | None) -> str:
    """What the model sees instead of `response` (error results keep their first lines)."""
    text = response.text()
    images = sum(isinstance(p, ImageContent) for p in response.content)
    size = []
    if text:
        count = text.count("\n") + 1
        size.append(f"{count:,} line{'s' if count != 1 else ''}, {len(text):,} chars")
    if images:
        size.append(f"{images} image{'s' if images != 1 else ''}")
    removed = ", ".join(size) or "no output"
    call = describe_call(request, response.id)
    recall = recall_hint(response.id)
    keys = placeholder_keys(text, exclude=call)
    holds = f"; it mentions {', '.join(keys)}" if keys else ""
    if not response.is_error:
        return (
            f"[output of {call} hidden to save context: {removed}{holds}; call {recall} to see it]"
        )
    lines = text.splitlines()
    kept = [_clip_line(line) for line in lines[:ERROR_LINES_KEPT]]
    more = "; its first lines follow" if kept else ""
    note = (
        f"[error output of {call} hidden to save context: {removed}{holds}{more}; "
        f"call {recall} to see all of it]"
    )
    return "\n".join([note, *kept])


def _clip_line(line: str) -> str:
    return line if len(line) <= ERROR_LINE_CHARS else line[: ERROR_LINE_CHARS - 1] + "…"


class MaskingCache:
    """Placeholder copies by message id, checked against the original's content tuple (which
    is immutable, so identity means "unchanged"). Bounded, least recently used first out."""

    def __init__(self, size: int = COPY_CACHE_SIZE) -> None:
        self.size = size
        self._copies: OrderedDict[str, tuple[tuple[object, ...], Message]] = OrderedDict()

    def get(self, message: Message, requests: Mapping[str, ToolRequest]) -> Message:
        """The placeholder copy of `message` (the key also covers the requests it names)."""
        key = (message.content, *(requests.get(r.id) for r in message.tool_responses))
        hit = self._copies.get(message.id)
        if hit is not None and len(hit[0]) == len(key) and all(map(_same, hit[0], key)):
            self._copies.move_to_end(message.id)
            copy = hit[1]
            if copy.metadata != message.metadata:
                copy = copy.with_metadata(message.metadata)
            return copy
        copy = masked_copy(message, requests)
        self._copies[message.id] = (key, copy)
        if len(self._copies) > self.size:
            self._copies.popitem(last=False)
        return copy


class MaskingPresenter:
    """Shows one message at a time as the model sees it, for views built incrementally.

    Call it on the agent-visible messages in order: it remembers the tool requests it has
    seen, so a masked result's placeholder can name its tool and arguments.
    """

    def __init__(self, cache: MaskingCache | None = None) -> None:
        self._cache = cache or MaskingCache()
        self._requests: dict[str, ToolRequest] = {}

    def __call__(self, message: Message) -> Message:
        if message.role == "assistant":
            for request in message.tool_requests:
                self._requests[request.id] = request
        if not message.metadata.masked:
            return message
        return self._cache.get(message, self._requests)

    def preview(self, message: Message) -> Message:
        """How `message` would look once masked (for deciding whether masking pays), from
        the same cache the view uses, so the copy is made once."""
        return self._cache.get(message, self._requests)


def _same(a: object, b: object) -> bool:
    return a is b
