"""`fix_conversation`: repair the agent view so every provider accepts it.

The processors run in a fixed order over the agent-visible messages only; messages the agent
cannot see keep their slots. Each processor reports what it changed. The whole pipeline is
repeated until a pass changes nothing (removing a leading assistant message can orphan the
tool responses after it), so fixing a fixed conversation never reports an issue.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from gosling.conversation.content import (
    Content,
    ImageContent,
    RedactedThinkingContent,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
)
from gosling.conversation.message import Message

EMPTY_TOOL_RESULT_PLACEHOLDER = "(empty result)"
EMPTY_CONVERSATION_PLACEHOLDER = "Hello"
_MAX_PASSES = 6

Processor = Callable[[list[Message]], tuple[list[Message], list[str]]]


def _is_blank_text(part: Content) -> bool:
    return isinstance(part, TextContent) and not part.text.strip()


def _is_empty(message: Message) -> bool:
    return all(_is_blank_text(p) for p in message.content)


def merge_text_content(messages: list[Message]) -> tuple[list[Message], list[str]]:
    out: list[Message] = []
    issues: list[str] = []
    for msg in messages:
        if msg.role != "assistant" or not _has_adjacent_text(msg.content):
            out.append(msg)
            continue
        merged: list[Content] = []
        for part in msg.content:
            if merged and isinstance(part, TextContent) and isinstance(merged[-1], TextContent):
                merged[-1] = TextContent(text=merged[-1].text + part.text)
            else:
                merged.append(part)
        out.append(msg.with_content(merged))
        issues.append("Merged text content")
    return out, issues


def _has_adjacent_text(content: Sequence[Content]) -> bool:
    return any(
        isinstance(a, TextContent) and isinstance(b, TextContent)
        for a, b in itertools.pairwise(content)
    )


def trim_assistant_whitespace(messages: list[Message]) -> tuple[list[Message], list[str]]:
    out: list[Message] = []
    issues: list[str] = []
    for msg in messages:
        needs = msg.role == "assistant" and any(
            isinstance(p, TextContent) and p.text != p.text.rstrip() for p in msg.content
        )
        if not needs:
            out.append(msg)
            continue
        out.append(
            msg.with_content(
                TextContent(text=p.text.rstrip()) if isinstance(p, TextContent) else p
                for p in msg.content
            )
        )
        issues.append("Trimmed trailing whitespace from assistant message")
    return out, issues


def remove_empty_messages(messages: list[Message]) -> tuple[list[Message], list[str]]:
    out = [m for m in messages if not _is_empty(m)]
    return out, ["Removed empty message"] * (len(messages) - len(out))


def _tool_result_is_empty(part: ToolResponse) -> bool:
    return not any(
        isinstance(p, ImageContent) or (isinstance(p, TextContent) and p.text.strip())
        for p in part.content
    )


def fix_empty_tool_results(messages: list[Message]) -> tuple[list[Message], list[str]]:
    out: list[Message] = []
    issues: list[str] = []
    for msg in messages:
        if not any(isinstance(p, ToolResponse) and _tool_result_is_empty(p) for p in msg.content):
            out.append(msg)
            continue
        parts: list[Content] = []
        for part in msg.content:
            if isinstance(part, ToolResponse) and _tool_result_is_empty(part):
                placeholder = TextContent(text=EMPTY_TOOL_RESULT_PLACEHOLDER)
                part = part.model_copy(update={"content": (*part.content, placeholder)})
                issues.append(f"Added placeholder to empty tool result '{part.id}'")
            parts.append(part)
        out.append(msg.with_content(parts))
    return out, issues


def fix_tool_calling(messages: list[Message]) -> tuple[list[Message], list[str]]:
    """Keep only tool requests that are answered and responses that answer a request.

    Requests and responses pair by position, not by id alone: a response answers an open
    request with its id in the nearest assistant message before it. Some servers reuse ids
    across turns (`call_0` every time), so an id answered in one turn says nothing about a
    request with the same id in another.
    """
    issues: list[str] = []
    open_requests: dict[str, list[tuple[int, int]]] = {}
    answered: set[tuple[int, int]] = set()
    first_pass: list[Message] = []
    for index, msg in enumerate(messages):
        kept: list[Content] = []
        for part in msg.content:
            if msg.role == "user":
                if isinstance(part, ToolRequest):
                    issues.append(f"Removed tool request '{part.id}' from user message")
                    continue
                if isinstance(part, ThinkingContent | RedactedThinkingContent):
                    issues.append("Removed thinking content from user message")
                    continue
                if isinstance(part, ToolResponse):
                    waiting = open_requests.get(part.id)
                    if not waiting:
                        issues.append(f"Removed orphaned tool response '{part.id}'")
                        continue
                    answered.add(waiting.pop(0))
            else:
                if isinstance(part, ToolResponse):
                    issues.append(f"Removed tool response '{part.id}' from assistant message")
                    continue
            kept.append(part)
        if msg.role == "assistant":
            # Only the user messages before the next assistant message may answer these.
            open_requests = {}
            for position, part in enumerate(kept):
                if isinstance(part, ToolRequest):
                    open_requests.setdefault(part.id, []).append((index, position))
        first_pass.append(msg if len(kept) == len(msg.content) else msg.with_content(kept))

    out: list[Message] = []
    for index, msg in enumerate(first_pass):
        unanswered = {
            position
            for position, part in enumerate(msg.content)
            if isinstance(part, ToolRequest) and (index, position) not in answered
        }
        if msg.role == "assistant" and unanswered:
            kept = []
            for position, part in enumerate(msg.content):
                if position in unanswered and isinstance(part, ToolRequest):
                    issues.append(f"Removed orphaned tool request '{part.id}'")
                    continue
                kept.append(part)
            msg = msg.with_content(kept)
        if _is_empty(msg):
            issues.append("Removed empty message")
        else:
            out.append(msg)
    return out, issues


def tool_responses_first(messages: list[Message]) -> tuple[list[Message], list[str]]:
    """Within a run of user messages, put every tool response ahead of other content, the way
    providers require (tool results answer the assistant turn before anything else)."""
    out: list[Message] = []
    issues: list[str] = []
    run: list[Message] = []
    for msg in [*messages, None]:
        if msg is not None and msg.role == "user":
            run.append(msg)
            continue
        if run:
            out.extend(_responses_first(run, issues))
            run = []
        if msg is not None:
            out.append(msg)
    return out, issues


def _responses_first(run: list[Message], issues: list[str]) -> list[Message]:
    seen_other = False
    ordered = True
    for msg in run:
        for part in msg.content:
            if isinstance(part, ToolResponse):
                ordered = ordered and not seen_other
            else:
                seen_other = True
    if ordered:
        return run
    issues.append("Moved tool responses ahead of user content")
    responses = [p for m in run for p in m.content if isinstance(p, ToolResponse)]
    others = [p for m in run for p in m.content if not isinstance(p, ToolResponse)]
    holder = next(m for m in run if m.tool_responses)
    rest = next((m for m in run if m is not holder), None)
    rebuilt = [holder.with_content(responses)]
    if others:
        base = rest if rest is not None else Message(role="user", created=holder.created)
        rebuilt.append(base.with_content(others))
    return rebuilt


def merge_consecutive_messages(messages: list[Message]) -> tuple[list[Message], list[str]]:
    out: list[Message] = []
    issues: list[str] = []
    for msg in messages:
        if out and out[-1].effective_role == msg.effective_role:
            role = msg.effective_role
            out[-1] = out[-1].with_content((*out[-1].content, *msg.content))
            issues.append(f"Merged consecutive {role} messages")
        else:
            out.append(msg)
    return out, issues


def fix_lead_trail(messages: list[Message]) -> tuple[list[Message], list[str]]:
    issues: list[str] = []
    if messages and messages[0].role == "assistant":
        messages = messages[1:]
        issues.append("Removed leading assistant message")
    if messages and messages[-1].role == "assistant":
        messages = messages[:-1]
        issues.append("Removed trailing assistant message")
    return messages, issues


def populate_if_empty(messages: list[Message]) -> tuple[list[Message], list[str]]:
    if messages:
        return messages, []
    placeholder = Message.user(EMPTY_CONVERSATION_PLACEHOLDER)
    return [placeholder], ["Added placeholder user message to empty conversation"]


PROCESSORS: tuple[Processor, ...] = (
    merge_text_content,
    trim_assistant_whitespace,
    remove_empty_messages,
    fix_empty_tool_results,
    fix_tool_calling,
    tool_responses_first,
    merge_consecutive_messages,
    fix_lead_trail,
    populate_if_empty,
)


def is_valid_agent_view(messages: Sequence[Message]) -> bool:
    """One fast pass: would `fix_conversation` leave these agent-visible messages unchanged?"""
    if not messages or messages[0].role != "user":
        return False
    return extends_valid_view(None, messages)


def extends_valid_view(previous: Message | None, tail: Sequence[Message]) -> bool:
    """Would a valid view ending with `previous` stay valid with `tail` appended?

    Lets a caller that keeps a view between model calls check only the new messages.
    """
    if not tail or tail[-1].role != "user":
        return False
    return _valid_run(None if previous is None else previous.effective_role, tail)


def _valid_run(previous: str | None, messages: Sequence[Message]) -> bool:
    pending: list[str] = []  # ids of the last assistant message's unanswered requests
    for msg in messages:
        role = msg.effective_role
        if role == previous:
            return False
        previous = role
        if pending and role != "tool":
            return False
        content = msg.content
        if not content:
            return False
        blank = True
        prev_text = False
        seen_other = False
        for part in content:
            is_text = isinstance(part, TextContent)
            if isinstance(part, TextContent):
                text = part.text
                if text.strip():
                    blank = False
                if msg.role == "assistant" and (prev_text or text != text.rstrip()):
                    return False
            else:
                blank = False
            prev_text = is_text
            if msg.role == "assistant":
                if isinstance(part, ToolRequest):
                    pending.append(part.id)
                elif isinstance(part, ToolResponse):
                    return False
            elif isinstance(part, ToolRequest | ThinkingContent | RedactedThinkingContent):
                return False
            elif isinstance(part, ToolResponse):
                if seen_other or part.id not in pending or _tool_result_is_empty(part):
                    return False
                pending.remove(part.id)
            else:
                seen_other = True
        if blank:
            return False
    return not pending


def _fix_visible(visible: list[Message]) -> tuple[list[Message], list[str]]:
    if is_valid_agent_view(visible):
        return visible, []
    issues: list[str] = []
    for _ in range(_MAX_PASSES):
        round_issues: list[str] = []
        for processor in PROCESSORS:
            visible, found = processor(visible)
            round_issues.extend(found)
        issues.extend(round_issues)
        if not round_issues:
            break
    return visible, issues


def fix_conversation(messages: Sequence[Message]) -> tuple[list[Message], list[str]]:
    """Repair the agent-visible messages; others pass through in their original slots.

    Returns the repaired full list and the issues found, in the order they were fixed.
    """
    visible = [m for m in messages if m.metadata.agent_visible]
    fixed, issues = _fix_visible(visible)
    if not issues:
        return list(messages), []
    out: list[Message] = []
    k = 0
    for msg in messages:
        if msg.metadata.agent_visible:
            if k < len(fixed):
                out.append(fixed[k])
            k += 1
        else:
            out.append(msg)
    out.extend(fixed[k:])
    return out, issues


def fix_agent_view(messages: Sequence[Message]) -> tuple[list[Message], list[str]]:
    """The agent-visible messages only, repaired, and the issues found. Masking is not
    applied here (this package knows nothing of it): `gosling.model_view` gives what a
    provider is sent, masked results shown as their placeholders."""
    return _fix_visible([m for m in messages if m.metadata.agent_visible])
