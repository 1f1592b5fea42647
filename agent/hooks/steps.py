"""The points of a turn where hooks run, as small steps the reply loop and the tool runner
call (so neither grows hook logic of its own).

Context a hook adds becomes an agent-only user message (`kind="hook_context"`) right where
Claude Code puts it: after the prompt (SessionStart, UserPromptSubmit), after a compaction's
summary (PostCompact, and SessionStart with source `compact`), or inside the tool's result
(PreToolUse, PostToolUse), so tool calls and their results stay paired.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gosling.agent.events import Event, MessageAdded
from gosling.agent.hooks.outcome import NO_OUTCOME, HookOutcome
from gosling.agent.hooks.tools import names_of, tool_fields, tool_response
from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse

if TYPE_CHECKING:
    from gosling.agent.session import AgentSession

HOOK_CONTEXT_KIND = "hook_context"
STOP_FEEDBACK = "A Stop hook asked you to keep going:\n{reason}"
MAX_STOP_BLOCKS = 10
"""Times Stop hooks may keep one turn going; a hook that always blocks cannot spend the
whole `max_turns` budget."""
STOP_LIMIT = "Stop hooks kept this turn going {count} times; stopping it here."
POST_TOOL_FEEDBACK = "A PostToolUse hook says: {reason}"


INPUT_UPDATED = "A PreToolUse hook changed this call to {name} {arguments}"


def input_update_note(name: str, arguments: Mapping[str, Any]) -> str:
    """What the model is told when a hook's `updatedInput` changed its call."""
    import json

    shown = json.dumps(dict(arguments), ensure_ascii=False, default=str)
    return INPUT_UPDATED.format(name=name, arguments=shown[:2_000])


def context_message(event: str, text: str) -> Message:
    """Hook context as the model sees it (never shown to the user as theirs)."""
    body = f"Context from the user's {event} hook:\n{text}"
    return Message.user(body).agent_only().with_kind(HOOK_CONTEXT_KIND)


@dataclass
class PromptGate:
    """SessionStart (on a session's first turn) and UserPromptSubmit, before the prompt is
    stored. `blocked` holds the reason when a hook refused the prompt."""

    blocked: str | None = None
    stop_reason: str | None = None
    messages: list[Message] = field(default_factory=list)

    async def run(self, session: AgentSession, user: Message, model: str) -> AsyncIterator[Event]:
        hooks = session.hooks
        if hooks is None:
            return
        hooks.stop_hook_active = False
        hooks.stop_blocks = 0
        if not hooks.started:
            hooks.started = True
            source = hooks.start_source or ("resume" if session.messages else "startup")
            hooks.start_source = None
            start = await hooks.fire(
                session, "SessionStart", {"source": source, "model": model}, (source,)
            )
            for event in start.events:
                yield event
            if start.context:
                self.messages.append(context_message("SessionStart", start.context))
        if hooks.wants("UserPromptSubmit"):
            prompt = await hooks.fire(session, "UserPromptSubmit", {"prompt": user.text})
            for event in prompt.events:
                yield event
            if prompt.blocked:
                self.blocked = prompt.reason
                return
            self.stop_reason = prompt.stop_reason
            if prompt.context:
                self.messages.append(context_message("UserPromptSubmit", prompt.context))


async def stop_feedback(
    session: AgentSession, reply: Message, events: list[Event]
) -> tuple[Message | None, str | None]:
    """Stop hooks when the model is done: a message to keep it going (a hook blocked the
    stop), or None; and the stop reason of a hook that said `continue: false`."""
    hooks = session.hooks
    if hooks is None or not hooks.wants("Stop"):
        return None, None
    fields = {"stop_hook_active": hooks.stop_hook_active, "last_assistant_message": reply.text}
    outcome = await hooks.fire(session, "Stop", fields)
    events += outcome.events
    if outcome.stop_reason is not None or not outcome.blocked:
        hooks.stop_hook_active = False
        return None, outcome.stop_reason
    hooks.stop_blocks += 1
    if hooks.stop_blocks > MAX_STOP_BLOCKS:
        from gosling.agent.events import Notice

        hooks.stop_hook_active = False
        events.append(Notice(STOP_LIMIT.format(count=MAX_STOP_BLOCKS)))
        return None, None
    hooks.stop_hook_active = True
    text = STOP_FEEDBACK.format(reason=outcome.reason)
    return Message.user(text).agent_only().with_kind(HOOK_CONTEXT_KIND), None


async def pre_tool_use(
    session: AgentSession | None, requests: Sequence[ToolRequest], working_dir: Path
) -> list[HookOutcome]:
    """PreToolUse for every call of one message, all at once."""
    import asyncio

    hooks = session.hooks if session is not None else None
    if session is None or hooks is None or not hooks.wants("PreToolUse"):
        return [NO_OUTCOME for _ in requests]
    return list(
        await asyncio.gather(
            *(
                hooks.fire(
                    session,
                    "PreToolUse",
                    {
                        **tool_fields(r.name, r.arguments, working_dir),
                        "tool_use_id": r.id,
                    },
                    names_of(r.name),
                    tool_use_id=r.id,
                )
                for r in requests
            )
        )
    )


async def post_tool_use(
    session: AgentSession | None,
    request: ToolRequest,
    response: ToolResponse,
    working_dir: Path,
    before: HookOutcome,
) -> tuple[ToolResponse, HookOutcome]:
    """PostToolUse for one call that ran; its feedback and any context (PreToolUse's too)
    join the result the model reads."""
    hooks = session.hooks if session is not None else None
    extra = [before.context] if before.context else []
    outcome = NO_OUTCOME
    if session is not None and hooks is not None and hooks.wants("PostToolUse"):
        fields = {
            **tool_fields(request.name, request.arguments, working_dir),
            "tool_use_id": request.id,
            "tool_response": tool_response(
                request.name, request.arguments, response.text(), response.is_error, working_dir
            ),
        }
        outcome = await hooks.fire(
            session, "PostToolUse", fields, names_of(request.name), tool_use_id=request.id
        )
        if outcome.blocked:
            extra.append(POST_TOOL_FEEDBACK.format(reason=outcome.reason))
        if outcome.context:
            extra.append(outcome.context)
    if not extra:
        return response, outcome
    parts = (*response.content, *(TextContent(text=f"\n\n[hook] {t}") for t in extra))
    return response.model_copy(update={"content": parts}), outcome


async def notify(session: AgentSession | None, message: str, notification_type: str) -> list[Event]:
    """Notification hooks (a tool call waits for approval, or was refused for lack of it)."""
    hooks = session.hooks if session is not None else None
    if session is None or hooks is None or not hooks.wants("Notification"):
        return []
    fields = {"message": message, "notification_type": notification_type, "title": "gosling"}
    outcome = await hooks.fire(session, "Notification", fields, (notification_type,))
    return outcome.events


COMPACT_TRIGGERS = {"manual": "manual", "threshold": "auto", "overflow": "auto"}
PRE_COMPACT_POSTPONED = "A PreCompact hook postponed the compaction: {reason}"
PRE_COMPACT_BLOCKED_OVERFLOW = (
    "The request does not fit the model's context window and a PreCompact hook blocked the "
    "compaction it needs: {reason}"
)


@dataclass
class PreCompactGate:
    """PreCompact hooks before a compaction: they may make it wait (exit 2 or `decision:
    block`) or add `instructions` for the summarizer (stdout or `additionalContext`). A
    request that overflowed cannot wait: the turn ends with the hook's reason."""

    waits: bool = False
    instructions: str | None = None

    async def run(
        self, session: AgentSession, trigger: str, focus: str | None
    ) -> AsyncIterator[Event]:
        from gosling.agent.events import Notice
        from gosling.context_mgmt.errors import CompactionFailed

        hooks = session.hooks
        if hooks is None or not hooks.wants("PreCompact"):
            return
        named = COMPACT_TRIGGERS.get(trigger, "auto")
        fields = {
            "trigger": named,
            "custom_instructions": focus or "",
            "gosling_trigger": trigger,
        }
        outcome = await hooks.fire(session, "PreCompact", fields, (named,))
        for event in outcome.events:
            yield event
        if outcome.blocked:
            if trigger == "overflow":
                message = PRE_COMPACT_BLOCKED_OVERFLOW.format(reason=outcome.reason)
                raise CompactionFailed(message, reason="hook_blocked")
            self.waits = True
            yield Notice(PRE_COMPACT_POSTPONED.format(reason=outcome.reason))
            return
        self.instructions = outcome.context or None


async def compaction_context(
    session: AgentSession, trigger: str, summary: str, model: str
) -> AsyncIterator[Event]:
    """PostCompact, then SessionStart with source `compact` (where Claude Code scripts
    re-inject their rules); their context is stored after the summary."""
    hooks = session.hooks
    if hooks is None:
        return
    texts = []
    trigger = COMPACT_TRIGGERS.get(trigger, "auto")
    post = await hooks.fire(
        session, "PostCompact", {"trigger": trigger, "compact_summary": summary}, (trigger,)
    )
    for event in post.events:
        yield event
    if post.context:
        texts.append(("PostCompact", post.context))
    start = await hooks.fire(
        session, "SessionStart", {"source": "compact", "model": model}, ("compact",)
    )
    for event in start.events:
        yield event
    if start.context:
        texts.append(("SessionStart", start.context))
    for event_name, text in texts:
        message = context_message(event_name, text)
        session.append(message)
        yield MessageAdded(message)
