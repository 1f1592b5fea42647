"""`compact_messages`: replace the agent's view of a conversation with a summary
(reference §3).

Nothing is deleted. Every message the agent could see is flipped agent-invisible (what the
user sees does not change), and new agent-only messages are appended:

    [originals (agent-invisible)..., summary (user), continuation (assistant),
     copy of the last user text (user; automatic compaction only)]

The continuation tells the model how to treat the summary. In automatic compaction the
user's latest words come back verbatim after it, so the model answers them rather than a
paraphrase, and the view ends with a user message: valid to send as is, and valid when the
next assistant tool call and its responses follow. When there is no user text to carry over,
a note addressed to the model joins the summary message instead of a separate continuation,
for the same reason. A manual
`/compact` happens between turns; its view ends with the continuation and becomes valid
with the user's next message.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from gosling.context_mgmt.errors import CompactionFailed
from gosling.context_mgmt.receipt import CompactionReceipt, build_receipt
from gosling.context_mgmt.summarize import SUMMARY_KIND as SUMMARY_KIND
from gosling.context_mgmt.summarize import Summary, summarize
from gosling.context_mgmt.templates import DEFAULT_TEMPLATES, ContinuationText, ContinuationTexts
from gosling.conversation import Content, ImageContent, Message, MessageMetadata, TextContent
from gosling.providers import Provider, Usage

if TYPE_CHECKING:
    from gosling.context_mgmt.prefix_form import CompactionForm, SessionPrefix
    from gosling.context_mgmt.summary_deadline import SummaryDeadline
    from gosling.context_mgmt.templates import CompactionTemplates
    from gosling.context_mgmt.tokens import TokenCounter

CONTINUATION_KIND = "continuation"
PRESERVED_USER_KIND = "preserved_user"
_PRESERVABLE_KINDS = frozenset({None, PRESERVED_USER_KIND})

ContinuationMode = Literal["conversation", "tool_loop", "manual"]

CONTINUATION_TEXTS = ContinuationTexts()
"""The built-in continuation texts by mode (`prompts/templates/compaction_continuation.md`)."""
SUMMARY_ONLY_MODE: ContinuationText = "summary_only"
"""Used when there is no user text to carry over: the note then joins the summary message,
so it is addressed to the model rather than written in its voice."""
TOO_LARGE_MESSAGE = (
    "The summary came out at ~{summary:,} tokens, more than the ~{replaced:,} tokens of "
    "history it would replace, so it was not used and the history was kept as it is."
)


@dataclass(frozen=True)
class CompactionResult:
    """A compacted conversation and what it took to get there."""

    messages: tuple[Message, ...]
    """The whole conversation: originals (flipped) followed by the appended messages."""
    appended: tuple[Message, ...]
    """The new messages at the end, in order (summary first)."""
    hidden_ids: tuple[str, ...]
    """Ids of the originals that were agent-visible and no longer are."""
    usage: Usage
    retained_tokens: int
    """Estimated tokens of the agent view after compaction: the new context baseline."""
    mode: ContinuationMode
    """Which continuation was chosen: between turns, inside a tool loop (also when no user
    text was left to carry over), or at the user's request."""
    summary: Summary
    receipt: CompactionReceipt = field(default_factory=CompactionReceipt)
    """What the hidden originals hold (files, commands, error lines) that the summary and
    its artifact trail do not: what this compaction dropped from the model's view."""

    @property
    def agent_view(self) -> list[Message]:
        return [m for m in self.messages if m.metadata.agent_visible]


async def compact_messages(
    provider: Provider,
    messages: Sequence[Message],
    *,
    manual: bool = False,
    focus: str | None = None,
    counter: TokenCounter | None = None,
    templates: CompactionTemplates | None = None,
    instructions: str | None = None,
    deadline: SummaryDeadline | None = None,
    refuse_larger: bool = False,
    form: CompactionForm = "transcript",
    prefix: SessionPrefix | None = None,
) -> CompactionResult:
    """Summarize `messages` and return them with the summary in place of the agent view.

    `focus` carries the user's instructions for what to keep (`/compact keep the API
    decisions`), `instructions` extra rules for the summary (a PreCompact hook's);
    `templates` replaces the compaction and summary prompts; `deadline` bounds the
    summarizer's calls. Errors from summarizing propagate and leave the conversation
    unchanged. With `refuse_larger` (the session's pipeline sets it) a summary larger than
    the history it would replace is not used either: `CompactionFailed` with reason
    "summary_too_large", carrying the calls' usage. `form` and `prefix`: see `summarize`.
    """
    if counter is None:
        from gosling.context_mgmt.tokens import default_counter

        counter = default_counter()
    preserved_index = None if manual else _last_user_text_index(messages)
    summary = await summarize(
        provider,
        messages,
        focus=focus,
        counter=counter,
        templates=templates,
        instructions=instructions,
        deadline=deadline,
        form=form,
        prefix=prefix,
    )
    if refuse_larger:
        _refuse_oversized(summary, messages, counter)
    mode = _mode(messages, preserved_index, manual)

    hidden_ids = tuple(m.id for m in messages if m.metadata.agent_visible)
    originals = [m.with_agent_invisible() if m.metadata.agent_visible else m for m in messages]
    created = max([int(time.time()), *(m.created for m in messages)])
    agent_only = MessageMetadata.agent_only()
    texts = templates or DEFAULT_TEMPLATES
    continuation = TextContent(text=texts.render_continuation(mode))

    preserved = _preserved_copy(messages[preserved_index]) if preserved_index is not None else ()
    summary_content: tuple[Content, ...] = summary.message.content
    if not manual and not preserved:
        note = texts.render_continuation(SUMMARY_ONLY_MODE)
        summary_content = (*summary_content, TextContent(text=note))
    appended = [
        Message(
            role="user",
            content=summary_content,
            metadata=agent_only.with_kind(SUMMARY_KIND, hidden_ids),
            created=created,
        )
    ]
    if manual or preserved:
        appended.append(
            Message(
                role="assistant",
                content=(continuation,),
                metadata=agent_only.with_kind(CONTINUATION_KIND),
                created=created,
            )
        )
    if preserved:
        appended.append(
            Message(
                role="user",
                content=preserved,
                metadata=agent_only.with_kind(PRESERVED_USER_KIND),
                created=created,
            )
        )
    return CompactionResult(
        messages=(*originals, *appended),
        appended=tuple(appended),
        hidden_ids=hidden_ids,
        usage=summary.usage,
        retained_tokens=counter.count_chat("", appended),
        mode=mode,
        summary=summary,
        receipt=build_receipt(
            [m for m in messages if m.metadata.agent_visible], summary.message.text
        ),
    )


def _refuse_oversized(summary: Summary, messages: Sequence[Message], counter: TokenCounter) -> None:
    replaced = counter.count_chat("", [m for m in messages if m.metadata.agent_visible])
    produced = counter.count_chat("", [summary.message])
    if produced > replaced:
        raise CompactionFailed(
            TOO_LARGE_MESSAGE.format(summary=produced, replaced=replaced),
            reason="summary_too_large",
            requests=summary.requests,
            usage=summary.usage,
        )


def _last_user_text_index(messages: Sequence[Message]) -> int | None:
    """The user's latest own words the agent can see: text (and images), no tool traffic,
    and not one of gosling's synthetic messages (summaries, hints, notes)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if (
            message.role == "user"
            and message.metadata.agent_visible
            and message.metadata.kind in _PRESERVABLE_KINDS
            and message.has_text_only()
            and message.text.strip()
        ):
            return index
    return None


def _preserved_copy(message: Message) -> tuple[Content, ...]:
    return tuple(p for p in message.content if isinstance(p, TextContent | ImageContent))


def _mode(
    messages: Sequence[Message], preserved_index: int | None, manual: bool
) -> ContinuationMode:
    if manual:
        return "manual"
    """goose's rule (reference §3.1 step 6): the conversation continuation only when the
    user's latest words are the very last message; anything after them means the agent was
    working on them, so the tool-loop continuation."""
    if preserved_index is None or preserved_index != len(messages) - 1:
        return "tool_loop"
    return "conversation"
