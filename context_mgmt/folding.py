"""Folding: a run of old masked calls leaves the view behind one bounded note.

A placeholder is small, but one per masked call still makes every request grow with the
session. Folding hides old masked pairs (the assistant message with its calls and the
result with its placeholder) and puts one note in their place that names how many calls it
holds, by tool, the latest few with their ids and arguments, and the latest error lines,
and says how to get any of them back. Each fold replaces the previous note, so the view
holds one note of bounded size however many calls it covers.

Hiding pairs and placing the note follow the rules of tool-pair summaries
(`context_mgmt.tool_pairs.apply_tool_pair_summaries`: pair-safe hiding, one note appended
after tool results, an earlier note folded into the new one, a stranded note parked); the
note is of the same kind, so both mechanisms treat each other's notes alike. Nothing is
deleted: `context__recall("<id>")` shows any folded call, and `context__recall("folded")`
lists them all (`context_mgmt.recall`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

from gosling.context_mgmt.recall import FOLDED_KEYWORD, RECALL_TOOL_NAME, describe_call, recall_hint
from gosling.context_mgmt.tool_pairs import (
    TOOL_SUMMARY_KIND,
    PairApplication,
    apply_tool_pair_summaries,
)
from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse

FOLD_NOTE_HEADER = "[Folded tool calls:"
LISTED_CALLS = 8
"""The latest folded calls the note names one per line."""
LISTED_ERRORS = 3
"""The latest folded error results whose first line the note keeps."""
LINE_CHARS = 160
_STUB = "(folded)"


def fold_calls(messages: Sequence[Message], call_ids: Sequence[str]) -> PairApplication:
    """Hide the pairs of `call_ids` that can be hidden safely behind one folding note (the
    earlier note included). With no ids it only parks a stranded note."""
    stubs = {call_id: Message.user(_STUB) for call_id in call_ids}
    applied = apply_tool_pair_summaries(messages, stubs)
    if not applied.appended:
        return applied
    note = applied.appended[0]
    by_id = {m.id: m for m in applied.messages}
    covered = _covered_calls(note, by_id)
    kept = [
        p
        for p in note.content
        if isinstance(p, TextContent) and p.text != _STUB and not is_fold_text(p.text)
    ]
    text = render_fold_note(applied.messages, covered)
    folded = note.with_content([*kept, TextContent(text=text)] if text else kept)
    return replace(applied, messages=(*applied.messages[:-1], folded), appended=(folded,))


def is_fold_text(text: str) -> bool:
    return text.startswith(FOLD_NOTE_HEADER)


def _covered_calls(note: Message, by_id: Mapping[str, Message]) -> list[str]:
    """The tool call ids of every pair behind `note`, through the earlier notes it holds,
    oldest first."""
    calls: list[str] = []
    stack = list(reversed(note.metadata.source_ids))
    seen: set[str] = set()
    while stack:
        message = by_id.get(stack.pop())
        if message is None or message.id in seen:
            continue
        seen.add(message.id)
        if message.metadata.kind == TOOL_SUMMARY_KIND:
            if any(isinstance(p, TextContent) and is_fold_text(p.text) for p in message.content):
                stack.extend(reversed(message.metadata.source_ids))
            continue
        calls.extend(r.id for r in message.tool_requests)
    return list(dict.fromkeys(calls))


def render_fold_note(messages: Sequence[Message], call_ids: Sequence[str]) -> str:
    """The note for the folded `call_ids` (empty when there are none): bounded whatever
    their number."""
    if not call_ids:
        return ""
    wanted = set(call_ids)
    requests: dict[str, ToolRequest] = {}
    responses: dict[str, ToolResponse] = {}
    for message in messages:
        for part in message.content:
            if isinstance(part, ToolRequest) and part.id in wanted:
                requests.setdefault(part.id, part)
            elif isinstance(part, ToolResponse) and part.id in wanted:
                responses.setdefault(part.id, part)
    tools = Counter(requests[c].name for c in call_ids if c in requests)
    by_tool = ", ".join(f"{name} x{n}" for name, n in tools.most_common())
    count = len(call_ids)
    lines = [
        f"{FOLD_NOTE_HEADER} {count} earlier tool call{'s' if count != 1 else ''} "
        f"({by_tool or 'unknown tools'}) and your messages with them are out of view to save "
        f"context; nothing is lost. {recall_hint('<id>')} shows any of them in full, "
        f'{RECALL_TOOL_NAME}("{FOLDED_KEYWORD}") lists them all with their ids.'
    ]
    errors = [c for c in call_ids if c in responses and responses[c].is_error][-LISTED_ERRORS:]
    if errors:
        lines.append("Latest errors among them:")
        lines += [
            _clip(f"- {c}: {_first_line(responses[c])}")
            for c in errors
            if _first_line(responses[c])
        ]
    latest = call_ids[-LISTED_CALLS:]
    lines.append("Latest of them:" if count > len(latest) else "They are:")
    lines += [_clip(f"- {c}: {describe_call(requests.get(c), c)}") for c in latest]
    return "\n".join(lines) + "]"


def _first_line(response: ToolResponse) -> str:
    for line in response.text().splitlines():
        if line.strip():
            return line.strip()
    return ""


def _clip(line: str) -> str:
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"
