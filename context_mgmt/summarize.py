"""Summarize a conversation with the model, stepping down the removal ladder on overflow
(reference §4).

The whole transcript goes into the system prompt rendered from `compaction.md`; the user side
is one fixed request. Sending the history as text rather than as the original messages means
the request never carries tool schemas, signed thinking or images, and any provider can
summarize any conversation.

Output limit (reference §13 item 7): a reply that stopped at the output limit and holds no
complete summary document is not accepted silently. It is retried once with a request for
a shorter summary. If that retry is cut off as well (or overflows), the cut-off text is kept
with a note in front saying it is incomplete, and `Summary.truncated` is set so the caller can
tell the user. Failing the compaction instead would leave an overflowing session stuck.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gosling.context_mgmt.errors import CompactionFailed
from gosling.context_mgmt.format import extract_file_history, format_transcript
from gosling.context_mgmt.ladder import (
    REMOVAL_PERCENTAGES,
    filter_tool_responses,
    tool_response_positions,
)
from gosling.context_mgmt.structured import StructuredSummary, apply_structured
from gosling.context_mgmt.templates import DEFAULT_TEMPLATES, CompactionTemplates
from gosling.conversation import Message, TextContent, ThinkingContent
from gosling.prompts import PromptError
from gosling.providers import TRUNCATED_STOP_REASONS, ContextLengthExceeded, Provider, Usage

if TYPE_CHECKING:
    from gosling.context_mgmt.tokens import TokenCounter

logger = logging.getLogger(__name__)

SUMMARY_REQUEST = "Please summarize the conversation history provided in the system prompt."
SHORTER_REQUEST = (
    "Your previous attempt was cut off by the output limit before the JSON block was "
    "complete. Write a shorter version: keep the scratchpad brief, keep only the most "
    "important entries of each list and the essential key_code, and make sure the JSON "
    "block is complete."
)
TRUNCATED_NOTE = (
    "[This summary was cut off by the model's output limit and is incomplete; details from "
    "the end of the earlier conversation may be missing.]"
)

NO_TOOL_RESPONSES_MESSAGE = (
    "Failed to compact: the conversation is too large for the model's context window even "
    "to summarize it, and there are no tool responses to remove. Use a model or "
    "configuration with a larger usable context, disable some extensions to reduce the "
    "tool-schema payload, or start a new session."
)
EXHAUSTED_MESSAGE = (
    "Failed to compact: context limit exceeded even after removing all tool responses "
    "({requests} requests). Use a model with a larger context window or start a new session."
)
EMPTY_SUMMARY_MESSAGE = (
    "Failed to compact: the model returned an empty summary; the conversation was not "
    "changed. Try again, or use a different model for summaries."
)


@dataclass(frozen=True)
class Summary:
    """A finished summary: a user-role message ready to stand in for the history."""

    message: Message
    usage: Usage
    """Billable usage of every successful summarize call, normalised (estimated where the
    provider did not report)."""
    removal_percent: int
    """The ladder rung that fitted: the share of tool-response messages left out."""
    removed_tool_responses: int
    requests: int
    """Model calls made, including the ones that overflowed and a shorter-summary retry."""
    structured: StructuredSummary | None
    """The parsed document when the reply held one; None means the raw text was kept."""
    truncated: bool = False
    """The kept summary was cut off by the output limit (see the module docstring)."""


def render_compaction_prompt(
    messages: Sequence[Message],
    *,
    read_files: Sequence[str] = (),
    modified_files: Sequence[str] = (),
    focus: str | None = None,
    templates: CompactionTemplates | None = None,
    instructions: str | None = None,
) -> str:
    """The system prompt of a summarize call. A broken `compaction.md` (override or passed-in
    text) raises `CompactionFailed` naming it, so callers handle one kind of failure."""
    try:
        return (templates or DEFAULT_TEMPLATES).render_compaction(
            messages=format_transcript(messages),
            read_files="\n".join(read_files),
            modified_files="\n".join(modified_files),
            focus=(focus or "").strip(),
            instructions=(instructions or "").strip(),
        )
    except PromptError as exc:
        raise CompactionFailed(f"Failed to compact: {exc}", reason="prompt_template") from exc


async def summarize(
    provider: Provider,
    messages: Sequence[Message],
    *,
    focus: str | None = None,
    counter: TokenCounter | None = None,
    templates: CompactionTemplates | None = None,
    instructions: str | None = None,
) -> Summary:
    """Summarize the agent-visible `messages`.

    `templates` replaces the compaction and summary prompts (default: the prompt files);
    `instructions` are extra rules for this summary (a PreCompact hook's).

    On `ContextLengthExceeded` the next rung of `REMOVAL_PERCENTAGES` leaves out more tool
    responses (a rung that would send the same prompt again is skipped). Raises
    `CompactionFailed` when nothing fits or the summary is empty; any other error propagates
    unchanged.
    """
    if counter is None:
        from gosling.context_mgmt.tokens import default_counter

        counter = default_counter()
    visible = [m for m in messages if m.metadata.agent_visible]
    reads, writes = extract_file_history(visible)
    total_responses = len(tool_response_positions(visible))
    request = Message.user(SUMMARY_REQUEST)
    requests = 0
    previous_size = -1
    for percent in REMOVAL_PERCENTAGES:
        kept = filter_tool_responses(visible, percent)
        if len(kept) == previous_size:
            continue
        previous_size = len(kept)
        system = render_compaction_prompt(
            kept,
            read_files=reads,
            modified_files=writes,
            focus=focus,
            templates=templates,
            instructions=instructions,
        )
        requests += 1
        try:
            reply, usage = await provider.complete(system, [request], (), fast=True)
        except ContextLengthExceeded as exc:
            if total_responses == 0:
                raise CompactionFailed(
                    NO_TOOL_RESPONSES_MESSAGE, reason="no_tool_responses", requests=requests
                ) from exc
            if len(visible) - len(kept) == total_responses:
                raise CompactionFailed(
                    EXHAUSTED_MESSAGE.format(requests=requests),
                    reason="exhausted",
                    requests=requests,
                ) from exc
            logger.info("summary overflowed with %d%% of tool responses removed", percent)
            continue
        usage = normalise_usage(usage, system, request, reply, counter)
        outcome = await _finish(provider, system, reply, usage, counter, requests, templates)
        return Summary(
            message=Message(role="user", content=(TextContent(text=outcome.text),)),
            usage=outcome.usage,
            removal_percent=percent,
            removed_tool_responses=len(visible) - len(kept),
            requests=outcome.requests,
            structured=outcome.structured,
            truncated=outcome.truncated,
        )
    raise AssertionError("unreachable: the last rung removes every tool response")


def normalise_usage(
    usage: Usage, system: str, request: Message, reply: Message, counter: TokenCounter
) -> Usage:
    """Fill in the token counts the provider did not report, from local estimates."""
    updates: dict[str, int] = {}
    if usage.input_tokens is None:
        updates["input_tokens"] = counter.count_chat(system, [request])
    if usage.output_tokens is None:
        produced = [
            p.text if isinstance(p, TextContent) else p.thinking
            for p in reply.content
            if isinstance(p, TextContent | ThinkingContent)
        ]
        updates["output_tokens"] = counter.count_text(" ".join(produced))
    return usage.model_copy(update=updates) if updates else usage


@dataclass(frozen=True)
class _Outcome:
    text: str
    usage: Usage
    structured: StructuredSummary | None
    truncated: bool
    requests: int


async def _finish(
    provider: Provider,
    system: str,
    reply: Message,
    usage: Usage,
    counter: TokenCounter,
    requests: int,
    templates: CompactionTemplates | None,
) -> _Outcome:
    raw = reply.text
    if _cut_off(raw, usage):
        logger.warning("the summary was cut off by the output limit; asking for a shorter one")
        retry_request = Message.user(f"{SUMMARY_REQUEST}\n\n{SHORTER_REQUEST}")
        requests += 1
        try:
            retry, retry_usage = await provider.complete(system, [retry_request], (), fast=True)
        except ContextLengthExceeded:
            return _truncated(raw, usage, requests)
        retry_usage = normalise_usage(retry_usage, system, retry_request, retry, counter)
        usage = usage + retry_usage
        if _cut_off(retry.text, retry_usage) or not retry.text.strip():
            return _truncated(retry.text if retry.text.strip() else raw, usage, requests)
        raw = retry.text
    if not raw.strip():
        raise CompactionFailed(EMPTY_SUMMARY_MESSAGE, reason="empty_summary", requests=requests)
    text, structured = apply_structured(raw, templates)
    return _Outcome(text, usage, structured, truncated=False, requests=requests)


def _cut_off(text: str, usage: Usage) -> bool:
    stopped_at_limit = (usage.stop_reason or "").lower() in TRUNCATED_STOP_REASONS
    return stopped_at_limit and StructuredSummary.parse(text) is None


def _truncated(raw: str, usage: Usage, requests: int) -> _Outcome:
    if not raw.strip():
        raise CompactionFailed(EMPTY_SUMMARY_MESSAGE, reason="empty_summary", requests=requests)
    logger.warning("the summary was cut off twice; keeping the incomplete text with a note")
    return _Outcome(f"{TRUNCATED_NOTE}\n\n{raw}", usage, None, truncated=True, requests=requests)
