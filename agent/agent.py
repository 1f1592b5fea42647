"""`Agent.reply`: the reply loop.

One user message in; events out until the model stops calling tools, the turn budget runs
out, an error stops it or the caller cancels it. Every context decision is the session's
`ContextPipeline`'s (`before_call`, `overflowed`, `after_call`); the loop only calls it.
Every message and visibility change is persisted as it happens, and whatever stops the turn,
every tool call is answered. `Agent` keeps nothing between sessions: what a session needs
lives on its `AgentSession`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gosling.agent.config import Settings
from gosling.agent.context_pipeline import ContextPipeline
from gosling.agent.events import (
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
from gosling.agent.hooks.config import HookConfig
from gosling.agent.hooks.steps import PromptGate
from gosling.agent.permissions import (
    PermissionMode,
    PermissionSettings,
    parse_mode,
    rules_from_lists,
)
from gosling.agent.session import AgentSession, StoreExtensionData
from gosling.agent.system_prompt import RequestPrefix, build_request_prefix
from gosling.agent.tool_runner import Approver, ToolRunner
from gosling.agent.tools.developer import read_todo, render_todo_block
from gosling.agent.tools.manager import ExtensionManager
from gosling.context_mgmt import CompactionFailed
from gosling.context_mgmt.tokens import TokenCounter, default_counter
from gosling.context_mgmt.turn_context import TurnContext, format_turn_context, with_turn_context
from gosling.conversation import Message, ToolRequest
from gosling.hints import SubdirectoryHintTracker
from gosling.providers import (
    TRUNCATED_STOP_REASONS,
    Completed,
    ContextLengthExceeded,
    Provider,
    ProviderError,
    Usage,
)
from gosling.providers import TextDelta as ModelTextDelta
from gosling.providers import ThinkingDelta as ModelThinkingDelta
from gosling.sessions.errors import SessionStoreError
from gosling.sessions.store import SessionStore

if TYPE_CHECKING:
    from gosling.agent.telemetry.spans import Tracing

INTERRUPTED_NOTE = "(The user interrupted this turn before I replied.)"


class _TurnOver(Exception):
    """A hook ended the turn before the model was called."""


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
        hooks: HookConfig | None = None,
        transcripts_dir: Path | None = None,
        tracing: Tracing | None = None,
        global_hint_files: Sequence[str] | None = None,
    ) -> None:
        self.tracing = tracing
        """OpenTelemetry spans of every turn (None: tracing is off, nothing is imported)."""
        self.provider = tracing.wrap(provider) if tracing is not None else provider
        self.hooks = hooks or HookConfig()
        """Hooks every session of this agent runs (`transcripts_dir`: where their
        `transcript_path` files go)."""
        self.transcripts_dir = transcripts_dir
        self.tools = tools or ExtensionManager()
        self.store = session_store
        self.config = config or Settings()
        self.global_hint_files = None if global_hint_files is None else tuple(global_hint_files)
        """The hint names looked up in the user's config dir when the project chose
        `context_file_names` (None: the same names)."""
        self.working_dir = (working_dir or Path.cwd()).resolve()
        self.approver = approver
        self.counter = counter or default_counter()
        self.clock = clock or (lambda: datetime.now().astimezone())
        self.permissions = PermissionSettings(
            mode=parse_mode(self.config.mode),
            rules=rules_from_lists(**self.config.permissions.model_dump()),
        )

    # -- sessions -------------------------------------------------------------------------------

    def open_session(
        self,
        messages: Sequence[Message] = (),
        *,
        session_id: str | None = None,
        extension_data: dict[str, Any] | None = None,
        context_tokens: int = 0,
    ) -> AgentSession:
        """A session over `messages` with its own pipeline and hint tracker (`context_tokens`:
        the size it last recorded, if any). Not stored unless `session_id` names a stored one."""
        requests = [r for m in messages for r in m.tool_requests]
        hints = SubdirectoryHintTracker.from_tool_requests(
            requests,
            self.working_dir,
            self.config.context_file_names,
            import_budget_bytes=self._hint_import_budget(),
        )
        session = AgentSession(
            session_id,
            self.working_dir,
            self.store if session_id is not None else None,
            self.counter,
            ContextPipeline(self.provider, self.config, self.counter),
            hints,
            messages=list(messages),
            extension_data=extension_data or {},
            context_tokens=context_tokens,
        )
        session.pipeline.resumed(session, context_tokens)
        if self.hooks.hooks:
            from gosling.agent.hooks.dispatch import SessionHooks
            from gosling.agent.sandbox.choice import project_root

            session.hooks = SessionHooks(
                self.hooks,
                working_dir=self.working_dir,
                project_dir=project_root(self.working_dir),
                mode=lambda: self.permissions.mode.value,
                transcripts=self.transcripts_dir,
            )
        return session

    def _hint_import_budget(self) -> int:
        from gosling.agent.system_prompt import hint_import_budget

        return hint_import_budget(self.provider.model_config.context_limit)

    async def end_session(self, session: AgentSession, reason: str = "other") -> list[Event]:
        """SessionEnd hooks (`reason`: clear, logout, prompt_input_exit, other); their
        events, for the caller to show. Nothing they answer can keep the session open."""
        if session.hooks is None or not session.hooks.wants("SessionEnd"):
            return []
        outcome = await session.hooks.fire(session, "SessionEnd", {"reason": reason}, (reason,))
        return outcome.events

    def new_session(self, name: str = "") -> AgentSession:
        """A fresh session, stored when the agent has a store."""
        if self.store is None:
            return self.open_session()
        record = self.store.create(
            working_dir=self.working_dir,
            name=name,
            provider=self.provider.name,
            model=self.provider.model_config.model,
        )
        self.store.open_for_writing(record.id)
        return self.open_session(session_id=record.id)

    def resume_session(self, session_id: str) -> AgentSession:
        """Load a stored session to continue it (refused while another process writes it)."""
        if self.store is None:
            raise ValueError("resuming needs a session store")
        self.store.open_for_writing(session_id)
        return self.open_session(
            self.store.load_messages(session_id),
            session_id=session_id,
            extension_data=self.store.get_extension_data(session_id),
            context_tokens=self.store.get(session_id).tokens.context_tokens or 0,
        )

    def request_prefix(self, session: AgentSession) -> RequestPrefix:
        """The system prompt and tool schemas of `session`'s requests: built once, rebuilt
        when the permission mode or the set of extensions changes."""
        chat = self.permissions.mode == PermissionMode.CHAT
        built_for = (chat, self.tools.names)
        prefix = session.prefix
        if prefix is None or prefix.built_for not in (None, built_for):
            prefix = build_request_prefix(
                working_dir=self.working_dir,
                hint_files=self.config.context_file_names,
                tool_specs=() if chat else self.tools.specs(),
                chat_mode=chat,
                extension_instructions=self.tools.instructions(),
                now=self.clock(),
                appended=self.config.append_system_prompt,
                built_for=built_for,
                global_hint_files=self.global_hint_files,
                context_limit=self.provider.model_config.context_limit,
            )
            session.prefix = prefix
        session.pipeline.set_overhead(prefix.system_prompt, prefix.tool_specs)
        return prefix

    # -- one turn -------------------------------------------------------------------------------

    def reply(self, session: AgentSession, text: str | Message) -> AsyncGenerator[Event]:
        """Answer `text` (or a whole user message); the last event is always `TurnFinished`.
        With tracing on, the same events pass through the turn's spans."""
        events = self._reply(session, text)
        if self.tracing is not None:
            return self.tracing.turn(session, self.provider, events)
        return events

    async def _reply(self, session: AgentSession, text: str | Message) -> AsyncGenerator[Event]:
        user = text if isinstance(text, Message) else Message.user(text)
        turn = _Turn(started=self.clock())
        runner = ToolRunner(
            self.tools,
            self.permissions,
            self.working_dir,
            StoreExtensionData(session),
            self.approver,
            session_messages=lambda: session.messages,
            session_id=session.id,
            session=session,
        )
        stop: StopReason = "end_turn"
        error: str | None = None
        prefix = self.request_prefix(session)
        try:
            gate = PromptGate()
            async for event in gate.run(session, user, self.provider.model_config.model):
                yield event
            if gate.blocked is not None:
                stop, error = "hook_blocked", gate.blocked
                raise _TurnOver
            # inside the try: a store that cannot save it ends the turn cleanly
            session.append(user, *gate.messages)
            for message in (user, *gate.messages):
                yield MessageAdded(message)
            if gate.stop_reason is not None:
                stop, error = "hook_stopped", gate.stop_reason
                raise _TurnOver
            while True:
                if turn.calls >= self.config.max_turns:
                    stop = "max_turns"
                    break
                async for event in session.pipeline.before_call(session, turn.tool_calls):
                    yield event
                async for event in self._call_model(session, turn, prefix):
                    yield event
                reply = turn.reply
                assert reply is not None
                requests = reply.tool_requests
                if not requests:
                    if session.hooks is None:
                        break
                    async for event in self._stop_hooks(session, reply):
                        yield event
                    if session.hooks.stop_hook_active:
                        continue
                    break
                turn.tool_calls += len(requests)
                async for event in runner.run(requests):
                    yield event
                results = runner.response_message(requests)
                session.append(results)
                yield MessageAdded(results)
                if runner.stop_reason is not None:
                    stop, error = "hook_stopped", runner.stop_reason
                    break
                async for event in self._subdirectory_hints(session, requests):
                    yield event
        except _TurnOver:
            pass
        except asyncio.CancelledError:
            stop = "cancelled"
            for message in self._answer_interrupted(session, turn, runner):
                yield MessageAdded(message)
        except (ProviderError, CompactionFailed, SessionStoreError) as exc:
            stop = "context_exceeded" if isinstance(exc, CompactionFailed) else "error"
            error = str(exc)
            yield ErrorEvent(error, kind=type(exc).__name__)
        finally:
            await session.pipeline.settle(cancelled=stop == "cancelled")
        final = turn.reply.text if turn.reply is not None and stop == "end_turn" else ""
        yield TurnFinished(stop, turn.calls, final, turn.usage, runner.denied, error)

    # -- steps ----------------------------------------------------------------------------------

    async def _stop_hooks(self, session: AgentSession, reply: Message) -> AsyncIterator[Event]:
        """Stop hooks; a block stores their feedback so the loop goes on
        (`session.hooks.stop_hook_active`)."""
        from gosling.agent.hooks.steps import stop_feedback

        events: list[Event] = []
        feedback, _ = await stop_feedback(session, reply, events)
        for event in events:
            yield event
        if feedback is not None:
            session.append(feedback)
            yield MessageAdded(feedback)

    async def _call_model(
        self, session: AgentSession, turn: _Turn, prefix: RequestPrefix
    ) -> AsyncIterator[Event]:
        while True:
            view = session.view.request_messages(session.messages)
            view = session.pipeline.trimmer.anchored(view)
            block = format_turn_context(self._turn_context(session, turn))
            request = with_turn_context(view, block)
            turn.partial = ""
            completed: Completed | None = None
            stream = self.provider.stream(prefix.system_prompt, request, list(prefix.tool_specs))
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
            except ContextLengthExceeded as exc:
                async for compaction_event in session.pipeline.overflowed(session, exc):
                    yield compaction_event
                continue
            break
        turn.calls += 1
        turn.partial = ""
        reply, usage = completed.message, completed.usage
        turn.reply = reply
        turn.usage = turn.usage + usage
        context = session.pipeline.after_call(session, view, reply, usage)
        yield MessageAdded(reply)
        if usage.stop_reason in TRUNCATED_STOP_REASONS:
            yield Notice(
                f"The reply was cut off by the model's output limit ({usage.stop_reason}); "
                "raise max_output_tokens or ask for a shorter answer."
            )
        limit = self.provider.model_config.context_limit
        yield UsageUpdate(usage, context, limit)

    async def _subdirectory_hints(
        self, session: AgentSession, requests: list[ToolRequest]
    ) -> AsyncIterator[Event]:
        for request in requests:
            session.hints.record_tool_arguments(dict(request.arguments), self.working_dir)
        loaded = session.hints.load_new_hints(self.working_dir)
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

    async def switch_provider(self, session: AgentSession, provider: Provider) -> None:
        """Talk to another model from the next call on (`/model`)."""
        if self.tracing is not None:
            provider = self.tracing.wrap(provider)
        self.provider = provider
        await session.pipeline.switch_provider(provider)

    def set_mode(self, mode: str) -> None:
        """Change the permission mode from the next tool call on (`/mode`)."""
        self.permissions = replace(self.permissions, mode=parse_mode(mode))

    def clear(self, session: AgentSession) -> None:
        """Start the model afresh (`/clear`): hide everything from it, delete nothing."""
        flips = {
            m.id: m.metadata.with_agent_invisible() for m in session.messages if m.is_agent_visible
        }
        session.commit(metadata=flips, context_tokens=0)
        session.pipeline.cleared()
        session.hints = SubdirectoryHintTracker(
            self.config.context_file_names, import_budget_bytes=self._hint_import_budget()
        )
        if session.hooks is not None:
            session.hooks.started, session.hooks.start_source = False, "clear"

    async def compact(
        self,
        session: AgentSession,
        *,
        trigger: CompactionTrigger = "manual",
        focus: str | None = None,
    ) -> AsyncIterator[Event]:
        """Compact the session now (`/compact [focus]`)."""
        self.request_prefix(session)
        async for event in session.pipeline.compact(session, trigger=trigger, focus=focus):
            yield event


@asynccontextmanager
async def _closing(stream: AsyncIterator[object]) -> AsyncIterator[None]:
    """Close a provider stream whatever happens, so its connection is released."""
    try:
        yield
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
