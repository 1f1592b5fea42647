"""What a context strategy hid that the model later used.

Masking, pair summaries and compaction save tokens by hiding old tool output; the price is
paid when the model needs that output again (a recall, a re-run, or a guess). This module
finds, in a recorded session, where an assistant message uses something distinctive that it
can only have read in one earlier tool output, and counts how often a strategy had hidden
that output from the view of the call that used it.

A *distinctive token* is found by fixed rules, so counts repeat and can be argued about:

1. Text is split into runs of ASCII letters, digits and `_ . / -`; leading and trailing
   `. / -` are stripped (`./src/app.py.` and `src/app.py` are one token).
2. A token counts when it has at least `MIN_TOKEN_LENGTH` (6) characters and contains a
   digit, `/`, `_` or `.`: paths, snake_case identifiers, dotted names, long numbers. A
   path's last component counts on its own too (`models.py` out of `src/app/models.py`).
3. It comes from exactly one tool output before the use, and it did not appear before that
   output, nor anywhere before the use, in the system prompt, in user text or in assistant
   messages (text and tool-call arguments). So only the first use counts: after it, the
   model could have copied the token from its own message.

Assistant messages are read through their text and tool-call arguments; thinking is left
out (not every provider returns it). Pure functions, no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse

MIN_TOKEN_LENGTH = 6
_RUN = re.compile(r"[A-Za-z0-9_./\-]+")
_DISTINCTIVE = re.compile(r"[0-9/_.]")
_EDGES = "./-"


def distinctive_tokens(text: str) -> set[str]:
    """The distinctive tokens of `text` (rules 1 and 2 of the module docstring)."""
    found: set[str] = set()
    for run in _RUN.findall(text):
        token = run.strip(_EDGES)
        candidates = [token]
        if "/" in token:
            candidates.append(token.rsplit("/", 1)[-1])
        for candidate in candidates:
            if len(candidate) >= MIN_TOKEN_LENGTH and _DISTINCTIVE.search(candidate):
                found.add(candidate)
    return found


@dataclass(frozen=True)
class LaterUse:
    """Assistant message `message_index` used `token`, first seen in the output of call
    `tool_call_id` (in message `output_index`)."""

    tool_call_id: str
    output_index: int
    message_index: int
    token: str


def _assistant_text(message: Message) -> str:
    pieces: list[str] = []
    for part in message.content:
        if isinstance(part, TextContent):
            pieces.append(part.text)
        elif isinstance(part, ToolRequest):
            pieces.extend(_strings(part.arguments))
    return "\n".join(pieces)


def _strings(value: object) -> Iterable[str]:
    """Every string inside a JSON-like value (argument values are what the model wrote)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)
    elif value is not None:
        yield json.dumps(value)


def find_later_uses(
    messages: Sequence[Message], system_prompt: str | None = None
) -> list[LaterUse]:
    """Every (tool output, later assistant message, token) use in `messages`: by using
    message, then by output, then by token."""
    seen = distinctive_tokens(system_prompt or "")
    owners: dict[str, list[tuple[str, int]]] = {}
    uses: list[LaterUse] = []
    for index, message in enumerate(messages):
        if message.role == "assistant":
            tokens = distinctive_tokens(_assistant_text(message))
            found = [
                LaterUse(*owners[token][0], index, token)
                for token in tokens - seen
                if len(owners.get(token, ())) == 1
            ]
            uses.extend(sorted(found, key=lambda u: (u.output_index, u.token)))
            seen |= tokens
            continue
        for part in message.content:
            if isinstance(part, ToolResponse):
                for token in distinctive_tokens(part.text()) - seen:
                    sources = owners.setdefault(token, [])
                    if len(sources) < 2:
                        sources.append((part.id, index))
            elif isinstance(part, TextContent):
                seen |= distinctive_tokens(part.text)
    return uses


@dataclass(frozen=True)
class HiddenUseCount:
    """How many (tool output, using message) pairs there were, and how many of them had the
    output hidden from the view of the call that produced the using message."""

    uses: int
    hidden: int
    hidden_pairs: tuple[tuple[str, int], ...]

    @property
    def hidden_share(self) -> float:
        return self.hidden / self.uses if self.uses else 0.0


def count_hidden_uses(
    uses: Iterable[LaterUse],
    hidden_at: Mapping[int, Collection[str]],
    kept_at: Mapping[int, Mapping[str, Collection[str]]] | None = None,
) -> HiddenUseCount:
    """Count the uses whose output was hidden when it was used. `hidden_at` maps the index
    of each assistant message (the reply of one model call) to the ids of the tool calls
    whose output that call's view did not show whole; calls missing from it hid nothing. A
    message using several tokens of one output counts once. `kept_at` (same keys) gives the
    distinctive tokens each hidden output's stand-in still showed (a placeholder's keys): a
    use whose every token was still shown did not need the hidden output."""
    used: dict[tuple[str, int], set[str]] = {}
    for use in uses:
        used.setdefault((use.tool_call_id, use.message_index), set()).add(use.token)
    pairs = sorted(used, key=lambda p: (p[1], p[0]))
    kept_at = kept_at or {}

    def hidden_use(pair: tuple[str, int]) -> bool:
        if pair[0] not in hidden_at.get(pair[1], ()):
            return False
        shown = kept_at.get(pair[1], {}).get(pair[0], ())
        return not used[pair] <= set(shown)

    hidden = tuple(p for p in pairs if hidden_use(p))
    return HiddenUseCount(uses=len(pairs), hidden=len(hidden), hidden_pairs=hidden)


def kept_tokens(sent: Iterable[Message], hidden: Collection[str]) -> dict[str, frozenset[str]]:
    """The distinctive tokens that the stand-ins of the `hidden` outputs (placeholders with
    their keys, error heads) still show in the request `sent`."""
    return {
        part.id: frozenset(distinctive_tokens(part.text()))
        for message in sent
        for part in message.content
        if isinstance(part, ToolResponse) and part.id in hidden
    }


def tool_outputs(messages: Iterable[Message]) -> dict[str, str]:
    """The text of every tool output in `messages`, by tool call id."""
    return {
        part.id: part.text()
        for message in messages
        for part in message.content
        if isinstance(part, ToolResponse)
    }


def hidden_tool_outputs(sent: Iterable[Message], outputs: Mapping[str, str]) -> frozenset[str]:
    """The ids of `outputs` that the request `sent` does not show whole: masked to a
    placeholder, cut, folded into a summary or compacted away."""
    shown = {
        part.id
        for message in sent
        for part in message.content
        if isinstance(part, ToolResponse) and outputs.get(part.id) == part.text()
    }
    return frozenset(outputs.keys() - shown)


def hidden_by_call(
    messages: Sequence[Message], calls: Iterable[tuple[int, Sequence[Message]]]
) -> dict[int, frozenset[str]]:
    """`count_hidden_uses`'s input from what each call sent: `calls` pairs the index in
    `messages` of the assistant message a call produced with the messages that call sent."""
    return {
        reply: hidden_tool_outputs(sent, tool_outputs(messages[:reply])) for reply, sent in calls
    }
