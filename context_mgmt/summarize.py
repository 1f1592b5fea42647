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

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gosling.context_mgmt.artifact_trail import ArtifactTrail, build_trail
from gosling.context_mgmt.errors import CompactionFailed
from gosling.context_mgmt.format import extract_file_history, format_transcript
from gosling.context_mgmt.ladder import (
    REMOVAL_PERCENTAGES,
    filter_tool_responses,
    tool_response_positions,
)
from gosling.context_mgmt.prefix_form import (
    CompactionForm,
    SessionPrefix,
    blank_tool_results,
    blanked_count,
    tool_result_positions,
    with_request,
)
from gosling.context_mgmt.structured import StructuredSummary, apply_structured
from gosling.context_mgmt.structured import with_raw_trail as apply_structured_raw
from gosling.context_mgmt.summary_deadline import DEFAULT_DEADLINE, SETTINGS, SummaryDeadline
from gosling.context_mgmt.templates import DEFAULT_TEMPLATES, CompactionTemplates
from gosling.conversation import Message, TextContent, ThinkingContent, ToolResponse
from gosling.prompts import PromptError
from gosling.providers import (
    TRUNCATED_STOP_REASONS,
    ContextLengthExceeded,
    Provider,
    ToolSpec,
    Usage,
)
from gosling.providers.deadlines import request_deadline

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
CORRECTIVE_REQUEST = (
    "Your reply held no summary{why}. Tools are not available for this: write the summary "
    "now as text, in the format asked for above, without calling any tool."
)
NOT_RUN_RESULT = "Not run: tools are not available while writing the summary."
TOOL_CALL_MESSAGE = (
    "Failed to compact: the model called a tool instead of writing the summary, twice; the "
    "conversation was not changed. Try again, or use a different model for summaries."
)
TIMED_OUT_MESSAGE = (
    "Failed to compact: the summary did not finish within {seconds:g} s (the deadline for "
    "~{tokens:,} input tokens; {settings}); the conversation was not changed."
)
SUMMARY_KIND = "summary"
"""The kind of the message a compaction appends (also `compact.SUMMARY_KIND`)."""
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
    """Tool-response messages left out of the transcript, or (prefix form) tool results
    whose contents were blanked."""
    requests: int
    """Model calls made, including the ones that overflowed and a shorter-summary retry."""
    structured: StructuredSummary | None
    """The parsed document when the reply held one; None means the raw text was kept."""
    truncated: bool = False
    """The kept summary was cut off by the output limit (see the module docstring)."""
    merged_prior: bool = False
    """The history held an earlier summary, given to the summarizer as the checkpoint to
    carry forward."""
    rejected_replies: int = 0
    """Replies that called a tool or were empty and got the corrective retry."""
    trail: ArtifactTrail | None = None
    """The artifact trail (bounded) that was rendered into the summary."""
    form: CompactionForm = "transcript"
    """How the call was made: on the session's cached request prefix, or as a transcript in
    a new system prompt (also the prefix form's fallback)."""


def render_compaction_prompt(
    messages: Sequence[Message],
    *,
    read_files: Sequence[str] = (),
    modified_files: Sequence[str] = (),
    focus: str | None = None,
    templates: CompactionTemplates | None = None,
    instructions: str | None = None,
    previous_summary: str | None = None,
) -> str:
    """The system prompt of a summarize call. A broken `compaction.md` (override or passed-in
    text) raises `CompactionFailed` naming it, so callers handle one kind of failure.

    `previous_summary` is the checkpoint of an earlier compaction (see `split_prior`)."""
    try:
        return (templates or DEFAULT_TEMPLATES).render_compaction(
            messages=format_transcript(messages),
            read_files="\n".join(read_files),
            modified_files="\n".join(modified_files),
            focus=(focus or "").strip(),
            instructions=(instructions or "").strip(),
            previous_summary=(previous_summary or "").strip(),
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
    deadline: SummaryDeadline | None = None,
    form: CompactionForm = "transcript",
    prefix: SessionPrefix | None = None,
) -> Summary:
    """Summarize the agent-visible `messages`.

    `form="prefix"` with the session's `prefix` (its system prompt, tools and messages as
    last sent) makes the call on that cached prefix with the request last (see
    `prefix_form`); when it does not fit even with every tool result blanked, the transcript
    form below runs. The transcript form is the default.

    `templates` replaces the compaction and summary prompts (default: the prompt files);
    `instructions` are extra rules for this summary (a PreCompact hook's); `deadline` bounds
    each call in proportion to its input (default: `SummaryDeadline()`).

    An earlier summary among `messages` is not summarized again as if it were any message:
    it is handed over as the prior checkpoint, to be merged. A reply that calls a tool or
    holds no text gets one corrective retry that extends the same request.

    On `ContextLengthExceeded` the next rung of `REMOVAL_PERCENTAGES` leaves out more tool
    responses (a rung that would send the same prompt again is skipped). Raises
    `CompactionFailed` when nothing fits, the summary is empty or the deadline passes; any
    other error propagates unchanged.
    """
    if counter is None:
        from gosling.context_mgmt.tokens import default_counter

        counter = default_counter()
    visible = [m for m in messages if m.metadata.agent_visible]
    trail = build_trail(messages).bounded()
    prior, rest = split_prior(visible)
    reads, writes = extract_file_history(visible)
    total_responses = len(tool_response_positions(rest))
    request = Message.user(SUMMARY_REQUEST)
    calls = _Calls(provider, counter, deadline or DEFAULT_DEADLINE)
    if form == "prefix" and prefix is not None:
        on_prefix = await _summarize_on_prefix(
            calls,
            prefix,
            reads,
            writes,
            has_prior=prior is not None,
            focus=focus,
            templates=templates,
            instructions=instructions,
            trail=trail,
        )
        if on_prefix is not None:
            return on_prefix
        logger.info("the prefix form overflowed with every tool result blanked; transcript")
    previous_size = -1
    for percent in REMOVAL_PERCENTAGES:
        kept = filter_tool_responses(rest, percent)
        if len(kept) == previous_size:
            continue
        previous_size = len(kept)
        system = _system_prompt(
            kept, prior, reads, writes, focus=focus, templates=templates, instructions=instructions
        )
        try:
            reply, usage = await calls.valid_reply(system, [request], ())
        except ContextLengthExceeded as exc:
            if total_responses == 0:
                raise CompactionFailed(
                    NO_TOOL_RESPONSES_MESSAGE,
                    reason="no_tool_responses",
                    requests=calls.requests,
                    usage=calls.rejected_usage,
                ) from exc
            if len(rest) - len(kept) == total_responses:
                raise CompactionFailed(
                    EXHAUSTED_MESSAGE.format(requests=calls.requests),
                    reason="exhausted",
                    requests=calls.requests,
                    usage=calls.rejected_usage,
                ) from exc
            logger.info("summary overflowed with %d%% of tool responses removed", percent)
            continue
        outcome = await _finish(
            calls, system, (), _transcript_retry, reply, usage, templates, trail
        )
        return Summary(
            message=Message(role="user", content=(TextContent(text=outcome.text),)),
            usage=outcome.usage,
            removal_percent=percent,
            removed_tool_responses=len(rest) - len(kept),
            requests=calls.requests,
            structured=outcome.structured,
            truncated=outcome.truncated,
            merged_prior=prior is not None,
            rejected_replies=calls.rejected,
            trail=trail,
        )
    raise AssertionError("unreachable: the last rung removes every tool response")


async def _summarize_on_prefix(
    calls: _Calls,
    prefix: SessionPrefix,
    reads: Sequence[str],
    writes: Sequence[str],
    *,
    has_prior: bool,
    focus: str | None,
    templates: CompactionTemplates | None,
    instructions: str | None,
    trail: ArtifactTrail,
) -> Summary | None:
    """The prefix form's ladder: blank tool-result contents middle-out on overflow; None
    when even the last rung overflows (the caller falls back to the transcript form)."""
    try:
        ask = (templates or DEFAULT_TEMPLATES).render_prefix(
            read_files="\n".join(reads),
            modified_files="\n".join(writes),
            focus=(focus or "").strip(),
            instructions=(instructions or "").strip(),
            previous_summary="yes" if has_prior else "",
        )
    except PromptError as exc:
        raise CompactionFailed(f"Failed to compact: {exc}", reason="prompt_template") from exc
    previous: list[Message] | None = None
    for percent in REMOVAL_PERCENTAGES:
        sent = blank_tool_results(prefix.messages, percent)
        if sent == previous:
            continue  # the same bytes as the rung before
        previous = sent
        messages = with_request(sent, ask)
        try:
            reply, usage = await calls.valid_reply(prefix.system, messages, prefix.tools)
        except ContextLengthExceeded:
            logger.info("prefix summary overflowed with %d%% of tool results blanked", percent)
            continue

        def shorter(text: str, sent: list[Message] = sent) -> list[Message]:
            return with_request(sent, f"{ask}\n\n{text}")

        outcome = await _finish(
            calls, prefix.system, prefix.tools, shorter, reply, usage, templates, trail
        )
        return Summary(
            message=Message(role="user", content=(TextContent(text=outcome.text),)),
            usage=outcome.usage,
            removal_percent=percent,
            removed_tool_responses=blanked_count(len(tool_result_positions(sent)), percent),
            requests=calls.requests,
            structured=outcome.structured,
            truncated=outcome.truncated,
            merged_prior=has_prior,
            rejected_replies=calls.rejected,
            trail=trail,
            form="prefix",
        )
    return None


def _transcript_retry(text: str) -> list[Message]:
    return [Message.user(f"{SUMMARY_REQUEST}\n\n{text}")]


def split_prior(visible: Sequence[Message]) -> tuple[str | None, list[Message]]:
    """The latest earlier summary's text (the checkpoint to merge) and the messages without
    it. Only the summary text is taken, not the note addressed to the model after it."""
    for index in range(len(visible) - 1, -1, -1):
        message = visible[index]
        if message.metadata.kind == SUMMARY_KIND and message.content:
            first = message.content[0]
            if isinstance(first, TextContent) and first.text.strip():
                return first.text, [*visible[:index], *visible[index + 1 :]]
    return None, list(visible)


def _system_prompt(
    kept: Sequence[Message],
    prior: str | None,
    reads: Sequence[str],
    writes: Sequence[str],
    *,
    focus: str | None,
    templates: CompactionTemplates | None,
    instructions: str | None,
) -> str:
    system = render_compaction_prompt(
        kept,
        read_files=reads,
        modified_files=writes,
        focus=focus,
        templates=templates,
        instructions=instructions,
        previous_summary=prior,
    )
    if prior is None or prior.strip() in system:
        return system
    # A customised compaction.md that does not show `previous_summary`: the checkpoint goes
    # back into the transcript rather than being lost.
    logger.info("compaction.md does not use previous_summary; the prior summary stays inline")
    return render_compaction_prompt(
        [Message.user(prior), *kept],
        read_files=reads,
        modified_files=writes,
        focus=focus,
        templates=templates,
        instructions=instructions,
    )


class _Calls:
    """The summarizer's model calls: deadline, usage of every attempt, corrective retry."""

    def __init__(self, provider: Provider, counter: TokenCounter, deadline: SummaryDeadline):
        self.provider = provider
        self.counter = counter
        self.deadline = deadline
        self.requests = 0
        self.rejected = 0
        self.rejected_usage = Usage()
        """Usage of the replies that were not used (tool-calling, empty): billed all the same."""

    async def call(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> tuple[Message, Usage]:
        """One call within its deadline; usage filled in where the provider said nothing."""
        tokens = self.counter.count_chat(system, messages)
        if tools:
            tokens += self.counter.count_tools(tools)
        seconds = self.deadline.seconds(tokens)
        self.requests += 1
        try:
            with request_deadline(seconds, setting="compaction_timeout_cap"):
                async with asyncio.timeout(seconds):
                    reply, usage = await self.provider.complete(system, messages, tools, fast=True)
        except TimeoutError:
            raise CompactionFailed(
                TIMED_OUT_MESSAGE.format(seconds=seconds, tokens=tokens, settings=SETTINGS),
                reason="timed_out",
                requests=self.requests,
                usage=self.rejected_usage,
            ) from None
        return reply, _fill_usage(usage, tokens, reply, self.counter)

    async def valid_reply(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> tuple[Message, Usage]:
        """A reply with text and no tool call; one corrective retry extends the request."""
        reply, usage = await self.call(system, messages, tools)
        if _usable(reply):
            return reply, usage
        self.rejected += 1
        self.rejected_usage = self.rejected_usage + usage
        logger.warning("the summarizer %s; asking once more", _what_went_wrong(reply))
        retry, retry_usage = await self.call(
            system, [*messages, *_corrective(reply, bool(tools))], tools
        )
        if _usable(retry):
            return retry, self.rejected_usage + retry_usage
        self.rejected += 1
        self.rejected_usage = self.rejected_usage + retry_usage
        if retry.tool_requests:
            raise CompactionFailed(
                TOOL_CALL_MESSAGE,
                reason="tool_call_summary",
                requests=self.requests,
                usage=self.rejected_usage,
            )
        raise CompactionFailed(
            EMPTY_SUMMARY_MESSAGE,
            reason="empty_summary",
            requests=self.requests,
            usage=self.rejected_usage,
        )


def _usable(reply: Message) -> bool:
    return not reply.tool_requests and bool(reply.text.strip())


def _what_went_wrong(reply: Message) -> str:
    if reply.tool_requests:
        names = ", ".join(r.name for r in reply.tool_requests)
        return f"called a tool ({names}) instead of writing the summary"
    return "returned no text"


def _corrective(reply: Message, with_tools: bool) -> list[Message]:
    """The turn that asks again. With tools in the request the tool call stays, answered as
    not run, so every pair is valid; without them it becomes a plain note."""
    why = " (you called a tool)" if reply.tool_requests else " (it was empty)"
    ask = TextContent(text=CORRECTIVE_REQUEST.format(why=why))
    if with_tools and reply.tool_requests:
        kept = tuple(p for p in reply.content if not isinstance(p, ThinkingContent))
        not_run = [
            ToolResponse(id=r.id, content=(TextContent(text=NOT_RUN_RESULT),), is_error=True)
            for r in reply.tool_requests
        ]
        return [
            Message(role="assistant", content=kept),
            Message(role="user", content=(*not_run, ask)),
        ]
    said = reply.text.strip() or "(no summary)"
    if reply.tool_requests:
        said = f"{said}\n[called {', '.join(r.name for r in reply.tool_requests)}]".strip()
    return [Message.assistant(said), Message(role="user", content=(ask,))]


def _fill_usage(usage: Usage, input_tokens: int, reply: Message, counter: TokenCounter) -> Usage:
    updates: dict[str, int] = {}
    if usage.input_tokens is None:
        updates["input_tokens"] = input_tokens
    if usage.output_tokens is None:
        produced = [
            p.text if isinstance(p, TextContent) else p.thinking
            for p in reply.content
            if isinstance(p, TextContent | ThinkingContent)
        ]
        updates["output_tokens"] = counter.count_text(" ".join(produced))
    return usage.model_copy(update=updates) if updates else usage


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


async def _finish(
    calls: _Calls,
    system: str,
    tools: Sequence[ToolSpec],
    shorter: Callable[[str], list[Message]],
    reply: Message,
    usage: Usage,
    templates: CompactionTemplates | None,
    trail: ArtifactTrail,
) -> _Outcome:
    raw = reply.text
    if _cut_off(raw, usage):
        logger.warning("the summary was cut off by the output limit; asking for a shorter one")
        try:
            retry, retry_usage = await calls.call(system, shorter(SHORTER_REQUEST), tools)
        except ContextLengthExceeded:
            return _truncated(raw, usage, calls, templates, trail)
        usage = usage + retry_usage
        if _cut_off(retry.text, retry_usage) or not retry.text.strip():
            kept = retry.text if retry.text.strip() else raw
            return _truncated(kept, usage, calls, templates, trail)
        raw = retry.text
    text, structured = apply_structured(raw, templates, trail)
    return _Outcome(text, usage, structured, truncated=False)


def _cut_off(text: str, usage: Usage) -> bool:
    stopped_at_limit = (usage.stop_reason or "").lower() in TRUNCATED_STOP_REASONS
    return stopped_at_limit and StructuredSummary.parse(text) is None


def _truncated(
    raw: str,
    usage: Usage,
    calls: _Calls,
    templates: CompactionTemplates | None,
    trail: ArtifactTrail,
) -> _Outcome:
    if not raw.strip():
        raise CompactionFailed(
            EMPTY_SUMMARY_MESSAGE, reason="empty_summary", requests=calls.requests, usage=usage
        )
    logger.warning("the summary was cut off twice; keeping the incomplete text with a note")
    text, _ = apply_structured_raw(f"{TRUNCATED_NOTE}\n\n{raw}", templates, trail)
    return _Outcome(text, usage, None, truncated=True)
