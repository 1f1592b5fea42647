"""`LiveSession`: one ACP session served by one gosling runtime (agent, tools, store).

A prompt runs `Agent.reply` in a task of its own; `session/cancel` cancels that task the way
Ctrl-C does in `gosling session`, so the reply loop answers every open tool call and keeps
what was said. Events become session updates through the session's `Outbox`. The runtime's
approver is `ask`, which puts gosling's "ask" decisions to the editor.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp import Client, RequestError
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    PromptResponse,
    SessionConfigOptionSelect,
    SessionModeState,
    ToolCallUpdate,
    Usage,
)

from gosling.agent.acp import errors, session_config, updates
from gosling.agent.acp.approval import (
    ALLOW_ALWAYS,
    ALLOW_ONCE,
    ALWAYS_KEY,
    REJECT,
    already_allowed,
    always_rule,
    granted_rules,
    with_rules,
)
from gosling.agent.acp.prompt_blocks import IMAGE_PROVIDERS, PromptBlock, prompt_message
from gosling.agent.acp.tool_view import FileDiff, describe_call, edit_preview
from gosling.agent.events import (
    CompactionFinished,
    CompactionStarted,
    Event,
    HintsLoaded,
    Notice,
    PermissionRequest,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolResult,
    TurnFinished,
    UsageUpdate,
)
from gosling.agent.permissions import Verdict, decide
from gosling.agent.runtime import Runtime
from gosling.agent.session import AgentSession, StoreExtensionData
from gosling.agent.tools.developer import TODO_KEY, read_todo
from gosling.conversation import Message, ToolRequest
from gosling.providers import TRUNCATED_STOP_REASONS

logger = logging.getLogger(__name__)

CHOICES_KEY = "interactive.choices"
"""The session's mode and model choices, shared with `gosling session` (its `/mode` and
`/model` write the same key), so either side resumes with what the other chose."""
REFUSAL_STOP_REASONS = frozenset({"refusal", "content_filter"})


@dataclass
class _Call:
    name: str
    diff: FileDiff | None
    done: bool = False


class LiveSession:
    def __init__(
        self,
        runtime: Runtime,
        session: AgentSession,
        client: Client,
        *,
        pinned: frozenset[str] = frozenset(),
        notes: list[str] | None = None,
        models: list[str] | None = None,
    ) -> None:
        from gosling.agent.acp.outbox import Outbox

        assert session.id is not None
        self.id = session.id
        self.runtime = runtime
        self.session = session
        self.client = client
        self.pinned = pinned
        """Choices given as flags ("provider", "model", "mode"): stored ones do not win."""
        self.notes = list(notes or [])
        """Warnings for the user, shown at the start of the next prompt."""
        self.models = models or [runtime.provider.model_config.model]
        self.outbox = Outbox(client, self.id)
        self._calls: dict[str, _Call] = {}
        self._work: asyncio.Future[PromptResponse] | None = None
        self.granted = list(granted_rules(session.extension_data.get(ALWAYS_KEY)))
        agent = runtime.agent
        agent.approver = self.ask
        agent.permissions = with_rules(agent.permissions, self.granted)

    @property
    def working_dir(self) -> Path:
        return self.runtime.agent.working_dir

    @property
    def busy(self) -> bool:
        return self._work is not None

    def post(self, update: updates.SessionUpdate) -> None:
        self.outbox.post(update)

    # -- modes and models -----------------------------------------------------------------------

    @property
    def mode(self) -> str:
        return self.runtime.agent.permissions.mode.value

    def modes(self) -> SessionModeState:
        return session_config.mode_state(self.mode)

    def config_options(self) -> list[SessionConfigOptionSelect]:
        model = self.runtime.provider.model_config.model
        return session_config.config_options(self.mode, model, self.models)

    def set_mode(self, mode: str, *, announce: str = "both") -> None:
        """Change the permission mode from the next tool call on; `announce` says which
        of the two forms to tell the editor about (it knows the one it set)."""
        if mode not in session_config.MODE_IDS:
            raise errors.invalid_params(
                f"unknown mode {mode!r}; choose one of: {', '.join(session_config.MODE_IDS)}",
                modeId=mode,
            )
        self.runtime.agent.set_mode(mode)
        self.remember_choices()
        if announce in ("both", "options"):
            self.post(updates.config_options(self.config_options()))
        if announce in ("both", "mode"):
            self.post(updates.current_mode(mode))

    async def set_model(self, model: str, *, announce: bool = True) -> None:
        from gosling.agent.config import ConfigError
        from gosling.providers import ProviderError

        try:
            await self.runtime.switch_model(self.session, model)
        except (ConfigError, ProviderError, ValueError) as exc:
            raise errors.invalid_params(f"cannot switch to {model}: {exc}", value=model) from exc
        if model not in self.models:
            self.models.insert(1, model)
        self.remember_choices()
        if announce:
            self.post(updates.config_options(self.config_options()))
        self.post_usage()

    def remember_choices(self) -> None:
        provider = self.runtime.agent.provider
        self.session.set_extension_data(
            CHOICES_KEY,
            {"provider": provider.name, "model": provider.model_config.model, "mode": self.mode},
        )

    async def restore_choices(self) -> None:
        """The mode and model this session last chose (flags win); one that no longer
        works is named in a note and the current one kept."""
        choices = self.session.extension_data.get(CHOICES_KEY)
        if not isinstance(choices, dict):
            return
        mode = choices.get("mode")
        if "mode" not in self.pinned and mode in session_config.MODE_IDS:
            self.runtime.agent.set_mode(str(mode))
        model, provider = choices.get("model"), choices.get("provider")
        current = self.runtime.provider
        if (
            isinstance(model, str)
            and model
            and provider == current.name
            and "model" not in self.pinned
            and model != current.model_config.model
        ):
            try:
                await self.set_model(model, announce=False)
            except RequestError as exc:
                self.notes.append(f"cannot restore model {model}: {exc}")

    # -- what the editor shows besides turns ----------------------------------------------------

    def announce(self) -> None:
        """Commands, the context meter and the plan, after the session opened."""
        from gosling.agent.acp.commands import AVAILABLE

        self.post(updates.commands(AVAILABLE))
        self.post_usage()
        self.post_plan()

    def post_usage(self, used: int | None = None) -> None:
        if used is None:
            from gosling.agent.context_report import report_for_agent

            used = report_for_agent(self.runtime.agent, self.session).current_tokens
        limit = self.runtime.provider.model_config.context_limit
        self.post(updates.usage(used, limit, self.session_cost()))

    def post_plan(self) -> None:
        items = read_todo(StoreExtensionData(self.session))
        if items or self.session.extension_data.get(TODO_KEY) is not None:
            self.post(updates.plan(items))

    def session_cost(self) -> float | None:
        """US dollars spent in this session so far, from the stored usage of every call
        (compactions and summaries included); None when a call's price is unknown."""
        from gosling.agent.provider_choice import model_prices
        from gosling.providers.pricing import cost_usd

        store = self.runtime.store
        if store is None:
            return None
        prices = model_prices(self.runtime.settings)
        fallback = self.runtime.provider.model_config.model
        total = 0.0
        for record in store.usage_records(self.id):
            cost = cost_usd(record.model or fallback, record.usage, prices)
            if cost is None:
                return None
            total += cost
        return total

    # -- turns ----------------------------------------------------------------------------------

    async def prompt(self, blocks: list[PromptBlock]) -> PromptResponse:
        from gosling.agent.acp.prompt_blocks import command_text

        if self.busy:
            raise errors.turn_running(self.id)
        command = command_text(blocks)
        if command is not None:
            from gosling.agent.acp.commands import run_command

            work: Any = run_command(self, command)
        else:
            images = self.runtime.provider.name in IMAGE_PROVIDERS
            try:
                message = prompt_message(blocks, self.working_dir, images=images)
            except ValueError as exc:
                raise errors.invalid_params(str(exc)) from exc
            work = self._reply(message)
        task: asyncio.Future[PromptResponse] = asyncio.ensure_future(work)
        self._work = task
        try:
            await asyncio.wait([task])
        except asyncio.CancelledError:  # the connection is closing: stop the turn too
            task.cancel()
            await asyncio.wait([task])
            raise
        finally:
            self._work = None
            self._calls.clear()
        await self.outbox.flush()
        if task.cancelled():
            return PromptResponse(stop_reason="cancelled")
        return task.result()

    def cancel(self) -> None:
        if self._work is not None:
            self._work.cancel()

    async def _reply(self, message: Message) -> PromptResponse:
        self.flush_notes()
        self._name_from(message.text)
        finished: TurnFinished | None = None
        async for event in self.runtime.agent.reply(self.session, message):
            if isinstance(event, TurnFinished):
                finished = event
            else:
                self.on_event(event)
        assert finished is not None
        if finished.stop_reason == "cancelled":
            self._close_open_calls()
        return _response(finished)

    def _close_open_calls(self) -> None:
        """A cancelled turn's unfinished calls end as failed, as the model is told."""
        from gosling.agent.tool_runner import CANCELLED_TEXT

        for call_id, call in self._calls.items():
            if not call.done:
                call.done = True
                self.post(updates.tool_finished(call_id, CANCELLED_TEXT, True))

    def flush_notes(self) -> None:
        for note in self.notes:
            self.post(updates.agent_text(f"> note: {note}\n\n"))
        self.notes.clear()

    def _name_from(self, text: str) -> None:
        """Name an unnamed session after its first prompt, as `gosling run` does."""
        store = self.runtime.store
        if store is None or not text.strip():
            return
        record = store.get(self.id)
        if record.name:
            return
        from gosling.agent.cli.session_names import session_name_from

        renamed = store.rename(self.id, session_name_from(text), by_user=False)
        self.post(updates.session_info(renamed.name, renamed.updated_at))

    def on_event(self, event: Event) -> None:
        """One reply-loop event as session updates (never waits: see `Outbox`)."""
        if isinstance(event, TextDelta):
            self.post(updates.agent_text(event.text))
        elif isinstance(event, ThinkingDelta):
            self.post(updates.agent_thought(event.text))
        elif isinstance(event, ToolCall):
            self._tool_call(event)
        elif isinstance(event, PermissionRequest) and event.granted:
            self.post(updates.tool_running(event.id))
        elif isinstance(event, ToolResult):
            call = self._calls.get(event.id)
            diff = call.diff if call is not None else None
            if call is not None:
                call.done = True
            self.post(updates.tool_finished(event.id, event.output, event.is_error, diff=diff))
            if event.name.endswith("__todo_write") and not event.is_error:
                self.post_plan()
        elif isinstance(event, UsageUpdate):
            cost = self.session_cost()
            self.post(updates.usage(event.context_tokens, event.context_limit, cost))
        elif isinstance(event, CompactionStarted):
            self.post(
                updates.agent_thought(
                    f"Compacting the conversation ({event.trigger}, "
                    f"~{event.tokens_before:,} tokens)…\n"
                )
            )
        elif isinstance(event, CompactionFinished):
            self.post(updates.agent_text(compaction_note(event)))
            self.post_usage(event.tokens_after)
        elif isinstance(event, HintsLoaded):
            where = ", ".join(event.directories)
            self.post(updates.agent_thought(f"Loaded the hint files of {where}.\n"))
        elif isinstance(event, Notice):
            self.post(updates.agent_text(f"\n\n> note: {event.text}\n\n"))

    def _tool_call(self, event: ToolCall) -> None:
        agent = self.runtime.agent
        annotations = agent.tools.annotations(event.name)
        view = describe_call(event.name, event.arguments, self.working_dir, annotations)
        diff = edit_preview(event.name, event.arguments, self.working_dir)
        self._calls[event.id] = _Call(event.name, diff)
        decision = decide(
            event.name,
            event.arguments,
            annotations,
            agent.permissions.mode,
            agent.permissions.effective_rules(),
            self.working_dir,
        )
        status = "in_progress" if decision.verdict is Verdict.ALLOW else "pending"
        self.post(updates.tool_started(event.id, view, event.arguments, status=status, diff=diff))

    # -- permissions ----------------------------------------------------------------------------

    async def ask(self, request: ToolRequest, reason: str) -> bool:
        """gosling's approver: put the call to the editor with allow once / always / reject."""
        agent = self.runtime.agent
        arguments = dict(request.arguments)
        annotations = agent.tools.annotations(request.name)
        permissions = agent.permissions
        if already_allowed(
            request.name, arguments, annotations, permissions, self.granted, self.working_dir
        ):
            return True
        rule = always_rule(request.name, arguments, annotations, permissions, self.working_dir)
        options = [PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once")]
        if rule is not None:
            options.append(
                PermissionOption(
                    option_id=ALLOW_ALWAYS,
                    name=f"Always allow {rule} in this session",
                    kind="allow_always",
                )
            )
        options.append(PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"))
        view = describe_call(request.name, arguments, self.working_dir, annotations)
        call = self._calls.get(request.id)
        content: list[Any] = []
        if call is not None and call.diff is not None:
            content.append(updates.diff_content(call.diff))
        content.append(updates.text_content(f"Needs your approval ({reason})."))
        tool_call = ToolCallUpdate(
            tool_call_id=request.id,
            title=view.title,
            kind=view.kind,
            status="pending",
            raw_input=arguments,
            content=content,
        )
        await self.outbox.flush()
        try:
            answer = await self.client.request_permission(
                session_id=self.id, tool_call=tool_call, options=options
            )
        except (RequestError, ConnectionError) as exc:
            logger.info("the editor did not answer a permission request: %s", exc)
            return False
        outcome = answer.outcome
        if not isinstance(outcome, AllowedOutcome):
            return False
        if outcome.option_id == ALLOW_ALWAYS and rule is not None:
            self.grant(rule)
            return True
        return outcome.option_id == ALLOW_ONCE

    def grant(self, rule: str) -> None:
        """Remember an "always" as gosling's allow rule for the rest of this session (kept
        with the session, so loading or resuming it keeps the rule)."""
        parsed = granted_rules([rule])
        self.granted.extend(parsed)
        agent = self.runtime.agent
        agent.permissions = with_rules(agent.permissions, parsed)
        stored = self.session.extension_data.get(ALWAYS_KEY)
        texts = [t for t in stored if isinstance(t, str)] if isinstance(stored, list) else []
        self.session.set_extension_data(ALWAYS_KEY, [*texts, rule])

    # -- closing --------------------------------------------------------------------------------

    async def close(self, *, discard_empty: bool = True) -> None:
        """Stop the running turn (its tool calls are answered), send what is left, release
        the session; a session nothing was said in is not kept (unless it is about to be
        opened again)."""
        if self._work is not None:
            self._work.cancel()
            await asyncio.wait([self._work])
        await self.outbox.close()
        try:
            await self.session.pipeline.close()
            store = self.runtime.store
            if discard_empty and store is not None and not self.session.messages:
                store.delete(self.id)
            else:
                self.session.release()
        finally:
            await self.runtime.aclose()


def compaction_note(event: CompactionFinished) -> str:
    why = {"threshold": "it neared the context limit", "overflow": "the model refused its size"}
    reason = why.get(event.trigger, "you asked")
    return (
        f"\n\n> Compacted the conversation because {reason}: ~{event.tokens_before:,} → "
        f"~{event.tokens_after:,} tokens. The model now works from a summary; the earlier "
        "messages are kept and it can recall them.\n\n"
    )


def _response(finished: TurnFinished) -> PromptResponse:
    """The prompt's stop reason; a turn that failed is the prompt's error."""
    if finished.stop_reason in ("error", "context_exceeded"):
        raise errors.failed(finished.error or "the turn failed", stopReason=finished.stop_reason)
    usage = finished.usage
    stop = {
        "max_turns": "max_turn_requests",
        "cancelled": "cancelled",
    }.get(finished.stop_reason, "end_turn")
    if stop == "end_turn" and usage.stop_reason in TRUNCATED_STOP_REASONS:
        stop = "max_tokens"
    elif stop == "end_turn" and usage.stop_reason in REFUSAL_STOP_REASONS:
        stop = "refusal"
    return PromptResponse(
        stop_reason=stop,
        usage=Usage(
            input_tokens=usage.input_tokens or 0,
            output_tokens=usage.output_tokens or 0,
            total_tokens=usage.total_tokens or 0,
            cached_read_tokens=usage.cache_read_tokens or None,
            cached_write_tokens=usage.cache_write_tokens or None,
        ),
    )
