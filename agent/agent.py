"""`Agent.reply`: the reply loop.

One user message in; events out until the model stops calling tools, the turn budget runs
out, an error stops it or the caller cancels it. Before every model call the context policy
trims old tool output and the budget decides whether to compact; every message and visibility
change is persisted as it happens, and whatever stops the turn, every tool call is answered.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from agent.config import Settings
from agent.context_policy import ContextPolicy
from agent.events import (
    CompactionFinished,
    CompactionStarted,
    CompactionTrigger,
    ErrorEvent,
    Event,
    HintsLoaded,
    MessageAdded,
    Notice,
    StopReason,
    TextDelta,
    ThinkingDelta,
    TurnFinished,
    UsageUpdate,
)
from agent.permissions import PermissionMode, PermissionSettings, parse_mode, rules_from_lists
from agent.session import AgentSession, StoreExtensionData
from agent.system_prompt import build_system_prompt
from agent.tool_runner import Approver, ToolRunner
from agent.tools.developer import read_todo, render_todo_block
from agent.tools.manager import ExtensionManager
from context_mgmt import CompactionFailed, ContextBudget, compact_messages
from context_mgmt.tokens import TokenCounter, default_counter
from context_mgmt.turn_context import TurnContext, format_turn_context, with_turn_context
from conversation import Message, ToolRequest
from hints import SubdirectoryHintTracker, load_hint_files
from providers import (
    TRUNCATED_STOP_REASONS,
    Completed,
    ContextLengthExceeded,
    Provider,
    ProviderError,
    Usage,
)
from providers import TextDelta as ModelTextDelta
from providers import ThinkingDelta as ModelThinkingDelta
from sessions.errors import SessionStoreError
from sessions.records import UsageKind, UsageRecord
from sessions.store import SessionStore

INTERRUPTED_NOTE = "(The user interrupted this turn before I replied.)"


@dataclass
class _Turn:
    started: datetime
    calls: int = 0
    tool_calls: int = 0
    """Tool calls made in this turn; they are never summarized while it runs."""
    usage: Usage = field(default_factory=Usage)
    reply: Message | None = None
    partial: str = ""


class Agent:
    """Runs turns of a session against one provider with one set of tools."""

    def __init__(
        self,
        provider: Provider,
        *,
        tools: ExtensionManager | None = None,
        session_store: SessionStore | None = None,
        config: Settings | None = None,
        working_dir: Path | None = None,
        approver: Approver | None = None,
        counter: TokenCounter | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.provider = provider
        self.tools = tools or ExtensionManager()
        self.store = session_store
        self.config = config or Settings()
        self.working_dir = (working_dir or Path.cwd()).resolve()
        self.approver = approver
        self.counter = counter or default_counter()
        self.clock = clock or (lambda: datetime.now().astimezone())
        self.permissions = PermissionSettings(
            mode=parse_mode(self.config.mode),
            rules=rules_from_lists(**self.config.permissions.model_dump()),
        )
        self.policy = ContextPolicy(provider, self.config, self.counter)
        self.system_prompt = ""
        self._reset_session_state()

    # -- sessions -------------------------------------------------------------------------------

    def _reset_session_state(self) -> None:
        self.budget = ContextBudget.for_provider(self.provider, self.config.auto_compact_threshold)
        self.hint_tracker = SubdirectoryHintTracker(self.config.context_file_names)

    def new_session(self, name: str = "") -> AgentSession:
        """A fresh session, stored when the agent has a store."""
        self._reset_session_state()
        session_id = None
        if self.store is not None:
            record = self.store.create(
                working_dir=self.working_dir,
                name=name,
                provider=self.provider.name,
                model=self.provider.model_config.model,
            )
            session_id = record.id
            self.store.open_for_writing(session_id)
        return AgentSession(
            session_id, self.working_dir, self.store, self.counter, present=self.policy.present
        )

    def resume_session(self, session_id: str) -> AgentSession:
        """Load a stored session to continue it (refused while another process writes it)."""
        if self.store is None:
            raise ValueError("resuming needs a session store")
        self.store.open_for_writing(session_id)
        self._reset_session_state()
        messages = self.store.load_messages(session_id)
        record = self.store.get(session_id)
        session = AgentSession(
            session_id,
            self.working_dir,
            self.store,
            self.counter,
            messages=messages,
            extension_data=self.store.get_extension_data(session_id),
            present=self.policy.present,
            context_tokens=record.tokens.context_tokens or 0,
        )
        requests = [r for m in messages for r in m.tool_requests]
        self.hint_tracker = SubdirectoryHintTracker.from_tool_requests(
            requests, self.working_dir, self.config.context_file_names
        )
        return session

    # -- one turn -------------------------------------------------------------------------------

    async def reply(self, session: AgentSession, text: str) -> AsyncIterator[Event]:
        """Answer `text`; the last event is always `TurnFinished`."""
        user = Message.user(text)
        turn = _Turn(started=self.clock())
        runner = ToolRunner(
            self.tools,
            self.permissions,
            self.working_dir,
            StoreExtensionData(session),
            self.approver,
            session_messages=lambda: session.messages,
        )
        stop: StopReason = "end_turn"
        error: str | None = None
        self._prepare_request()
        try:
            session.append(user)  # inside: a store that cannot save it ends the turn cleanly
            yield MessageAdded(user)
            while True:
                if turn.calls >= self.config.max_turns:
                    stop = "max_turns"
                    break
                async for event in self._before_call(session, turn):
                    yield event
                async for event in self._call_model(session, turn):
                    yield event
                reply = turn.reply
                assert reply is not None
                requests = reply.tool_requests
                if not requests:
                    break
                turn.tool_calls += len(requests)
                async for event in runner.run(requests):
                    yield event
                results = runner.response_message(requests)
                session.append(results)
                yield MessageAdded(results)
                async for event in self._subdirectory_hints(session, requests):
                    yield event
        except asyncio.CancelledError:
            stop = "cancelled"
            for message in self._answer_interrupted(session, turn, runner):
                yield MessageAdded(message)
        except (ProviderError, CompactionFailed, SessionStoreError) as exc:
            stop = "context_exceeded" if isinstance(exc, CompactionFailed) else "error"
            error = str(exc)
            yield ErrorEvent(error, kind=type(exc).__name__)
        finally:
            await self.policy.settle(session, cancelled=stop == "cancelled")
        final = turn.reply.text if turn.reply is not None and stop == "end_turn" else ""
        yield TurnFinished(stop, turn.calls, final, turn.usage, runner.denied, error)

    # -- steps ----------------------------------------------------------------------------------

    def _prepare_request(self) -> None:
        chat = self.permissions.mode == PermissionMode.CHAT
        self.tool_specs = [] if chat else self.tools.specs()
        self.system_prompt = build_system_prompt(
            working_dir=self.working_dir,
            hints=load_hint_files(self.working_dir, self.config.context_file_names),
            tool_names=[s.name for s in self.tool_specs],
            chat_mode=chat,
            extension_instructions=self.tools.instructions(),
            now=self.clock(),
            appended=self.config.append_system_prompt,
        )
        overhead = self.counter.count_text(self.system_prompt) + 4
        self.budget.overhead_tokens = overhead + self.counter.count_tools(self.tool_specs) + 3

    async def _before_call(self, session: AgentSession, turn: _Turn) -> AsyncIterator[Event]:
        async for event in self.policy.before_call(session, turn.tool_calls):
            yield event
        check = self.budget.check(session.view.request_messages(session.messages))
        if check.compact and self.policy.plan.compact_at_threshold:
            yield Notice(f"Compacting the conversation: {check.reason}.")
            async for event in self.compact(session, trigger="threshold"):
                yield event

    async def _call_model(self, session: AgentSession, turn: _Turn) -> AsyncIterator[Event]:
        while True:
            view = session.view.request_messages(session.messages)
            block = format_turn_context(self._turn_context(session, turn))
            request = with_turn_context(view, block)
            turn.partial = ""
            completed: Completed | None = None
            stream = self.provider.stream(self.system_prompt, request, self.tool_specs)
            try:
                async with _closing(stream):
                    async for event in stream:
                        if isinstance(event, ModelTextDelta):
                            turn.partial += event.text
                            yield TextDelta(event.text)
                        elif isinstance(event, ModelThinkingDelta):
                            yield ThinkingDelta(event.text)
                        elif isinstance(event, Completed):
                            completed = event
                if completed is None:
                    raise ProviderError("the model's reply ended without completing")
            except ContextLengthExceeded:
                if not self.policy.plan.compact_on_overflow:
                    raise
                self.budget.begin_overflow_compaction()
                yield Notice("The request did not fit the model's context window; compacting.")
                async for compaction_event in self.compact(session, trigger="overflow"):
                    yield compaction_event
                continue
            break
        turn.calls += 1
        turn.partial = ""
        reply, usage = completed.message, completed.usage
        turn.reply = reply
        turn.usage = turn.usage + usage
        context = (usage.input_tokens or 0) + (usage.output_tokens or 0) or None
        record = UsageRecord(usage, self.provider.model_config.model, UsageKind.NORMAL)
        session.commit(append=[reply], usage=[record], context_tokens=context)
        self.budget.record_usage(usage, [*view, reply])
        yield MessageAdded(reply)
        if usage.stop_reason in TRUNCATED_STOP_REASONS:
            yield Notice(
                f"The reply was cut off by the model's output limit ({usage.stop_reason}); "
                "raise max_output_tokens or ask for a shorter answer."
            )
        limit = self.provider.model_config.context_limit
        yield UsageUpdate(usage, context or self.budget.measure(view)[0], limit)

    async def _subdirectory_hints(
        self, session: AgentSession, requests: list[ToolRequest]
    ) -> AsyncIterator[Event]:
        for request in requests:
            self.hint_tracker.record_tool_arguments(dict(request.arguments), self.working_dir)
        loaded = self.hint_tracker.load_new_hints(self.working_dir)
        if not loaded:
            return
        text = "\n\n".join(content for _, content in loaded)
        message = Message.user(text).agent_only().with_kind("hints")
        session.append(message)
        yield MessageAdded(message)
        yield HintsLoaded([key.removeprefix("subdir_hints:") for key, _ in loaded])

    def _turn_context(self, session: AgentSession, turn: _Turn) -> TurnContext:
        return TurnContext(
            now=turn.started,
            working_dir=str(self.working_dir),
            context_tokens=session.context_tokens or None,
            context_limit=self.provider.model_config.context_limit,
            threshold=self.config.auto_compact_threshold,
            todo=render_todo_block(read_todo(StoreExtensionData(session))),
            turns_taken=turn.calls,
            max_turns=self.config.max_turns,
        )

    def _answer_interrupted(
        self, session: AgentSession, turn: _Turn, runner: ToolRunner
    ) -> list[Message]:
        """Persist what the user saw and answer any tool call left open."""
        added: list[Message] = []
        if turn.partial.strip():
            added.append(Message.assistant(turn.partial))
        last = session.messages[-1] if session.messages else None
        if last is not None and last.role == "assistant" and last.tool_requests:
            added.append(runner.response_message(last.tool_requests))
        elif not added and last is not None and last.effective_role == "user":
            # Nothing was said yet: a short agent-only reply keeps the conversation
            # alternating, so the user's next message is not merged into this one.
            added.append(Message.assistant(INTERRUPTED_NOTE).agent_only().with_kind("interrupted"))
        if added:
            session.append(*added)
        return added

    async def close(self) -> None:
        """Stop background work (tool-pair summaries)."""
        await self.policy.close()

    async def switch_provider(self, provider: Provider) -> None:
        """Talk to another model from the next call on (`/model`)."""
        presenter = self.policy.present  # sessions already hold it
        await self.policy.close()
        self.provider = provider
        self.policy = ContextPolicy(provider, self.config, self.counter)
        self.policy.present = presenter
        self.budget = ContextBudget.for_provider(provider, self.config.auto_compact_threshold)

    def set_mode(self, mode: str) -> None:
        """Change the permission mode from the next tool call on (`/mode`)."""
        self.permissions = replace(self.permissions, mode=parse_mode(mode))

    def clear(self, session: AgentSession) -> None:
        """Start the model afresh (`/clear`): hide everything from it, delete nothing."""
        flips = {
            m.id: m.metadata.with_agent_invisible() for m in session.messages if m.is_agent_visible
        }
        session.commit(metadata=flips, context_tokens=0)
        self._reset_session_state()

    # -- compaction -----------------------------------------------------------------------------

    async def compact(
        self,
        session: AgentSession,
        *,
        trigger: CompactionTrigger = "manual",
        focus: str | None = None,
    ) -> AsyncIterator[Event]:
        """Compact the session now (threshold, overflow or `/compact`)."""
        before = self.budget.measure(session.view.request_messages(session.messages))[0]
        yield CompactionStarted(trigger, before)
        result = await compact_messages(
            self.provider,
            session.messages,
            manual=trigger == "manual",
            focus=focus,
            counter=self.counter,
        )
        hidden = set(result.hidden_ids)
        flips = {m.id: m.metadata for m in result.messages if m.id in hidden}
        retained = result.retained_tokens + self.budget.overhead_tokens
        usage = UsageRecord(result.usage, self.provider.model_config.model, UsageKind.COMPACTION)
        session.commit(
            append=result.appended, metadata=flips, usage=[usage], context_tokens=retained
        )
        notice = self.budget.compacted(result)
        for message in result.appended:
            yield MessageAdded(message)
        yield CompactionFinished(trigger, before, retained, result.summary.structured is not None)
        if notice:
            yield Notice(notice)


@asynccontextmanager
async def _closing(stream: AsyncIterator[object]) -> AsyncIterator[None]:
    """Close a provider stream whatever happens, so its connection is released."""
    try:
        yield
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
