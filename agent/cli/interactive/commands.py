"""Slash commands of the interactive session.

Each command is one async function `(host, argument) -> keep_going`, written against
`CommandHost`, the little the commands need from the app (the interactive session
implements it; this module never imports the app). `/clear` and `/compact` are kept in the
session's history as user-only messages (the command and its outcome), so a resumed session
shows them, while the model never sees them.
"""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from gosling.agent.cli.interactive.status import StatusInfo, compact_number
from gosling.agent.events import CompactionFinished, Event, Notice

if TYPE_CHECKING:
    from gosling.agent.agent import Agent
    from gosling.agent.cli.interactive.render import Renderer
    from gosling.agent.runtime import Runtime
    from gosling.agent.session import AgentSession


class CommandHost(Protocol):
    """What a slash command may use of the interactive session."""

    renderer: Renderer
    runtime: Runtime
    status: StatusInfo

    @property
    def agent(self) -> Agent: ...

    @property
    def session(self) -> AgentSession: ...

    def record_command(self, command: str, reply: str) -> None:
        """Keep the command and its outcome in the user's history (never the model's)."""

    def refresh_status(self) -> None: ...

    def remember_choices(self) -> None:
        """Keep the current model and mode with the session (restored on resume)."""

    def on_event(self, event: Event) -> None: ...

    async def interruptible(self, work: Awaitable[Any], label: str = "thinking") -> bool:
        """Run `work` with Ctrl-C bound to cancelling it; False when it was cancelled."""
        ...

    async def switch_to(self, session_id: str) -> None:
        """Continue another stored session."""


Handler = Callable[[CommandHost, str], Awaitable[bool]]
MODES = ("auto", "approve", "smart_approve", "chat")
CLEARED_TEXT = "Conversation cleared: the model starts afresh. The history is kept."


@dataclass(frozen=True)
class SlashCommand:
    usage: str
    help: str
    run: Handler


async def _help(app: CommandHost, argument: str) -> bool:
    width = max(len(c.usage) for c in COMMANDS.values())
    for command in COMMANDS.values():
        app.renderer.line(f"  {command.usage:<{width}}  {command.help}")
    app.renderer.info("  Start a message with // to send text that begins with a slash.")
    return True


async def _exit(app: CommandHost, argument: str) -> bool:
    return False


async def _clear(app: CommandHost, argument: str) -> bool:
    for event in await app.agent.end_session(app.session, "clear"):
        if isinstance(event, Notice):
            app.renderer.note(event.text)
    app.agent.clear(app.session)
    app.record_command("/clear", CLEARED_TEXT)
    app.refresh_status()
    app.renderer.line(CLEARED_TEXT, "green")
    return True


async def _compact(app: CommandHost, argument: str) -> bool:
    from gosling.context_mgmt import CompactionFailed
    from gosling.providers import ProviderError

    command = f"/compact {argument}".rstrip()
    session = app.session
    if not any(m.metadata.agent_visible for m in session.messages):
        app.renderer.info("Nothing to compact yet.")
        return True
    outcome: list[str] = []

    async def work() -> None:
        try:
            async for event in app.agent.compact(session, trigger="manual", focus=argument or None):
                if not isinstance(event, CompactionFinished):
                    app.on_event(event)
                else:  # the outcome is printed once, below, and kept in the history
                    app.status = app.status.after(event)
                    receipt = f" {event.receipt_line.capitalize()}." if event.receipt_line else ""
                    outcome.append(
                        f"Compaction complete: ~{compact_number(event.tokens_before)} → "
                        f"~{compact_number(event.tokens_after)} tokens.{receipt}"
                    )
        except (CompactionFailed, ProviderError) as exc:
            outcome.append(f"Compaction failed: {exc}")

    finished = await app.interruptible(work(), "compacting")
    reply = outcome[-1] if outcome else "Compaction interrupted; nothing changed."
    if finished or outcome:
        app.record_command(command, reply)
    failed = reply.startswith("Compaction failed")
    if failed:
        app.renderer.error(reply)
    elif finished:
        app.renderer.line(reply, "green")
    return True


async def _mode(app: CommandHost, argument: str) -> bool:
    if not argument:
        current = app.agent.permissions.mode.value
        app.renderer.line(f"mode: {current}  (choices: {', '.join(MODES)})")
        return True
    try:
        app.agent.set_mode(argument)
    except ValueError as exc:
        app.renderer.error(str(exc))
        return True
    app.remember_choices()
    app.refresh_status()
    app.renderer.line(f"mode: {app.agent.permissions.mode.value}", "green")
    return True


async def _model(app: CommandHost, argument: str) -> bool:
    from gosling.agent.config import ConfigError
    from gosling.providers import ProviderError

    agent = app.agent
    if not argument:
        config = agent.provider.model_config
        app.renderer.line(
            f"model: {agent.provider.name}/{config.model} "
            f"(context window {config.context_limit:,} tokens)"
        )
        return True
    try:
        provider = await app.runtime.switch_model(app.session, argument)
    except (ConfigError, ProviderError, ValueError) as exc:
        app.renderer.error(f"cannot switch to {argument}: {exc}")
        return True
    app.remember_choices()
    app.refresh_status()
    app.renderer.line(
        f"model: {provider.name}/{provider.model_config.model} "
        f"(context window {provider.model_config.context_limit:,} tokens)",
        "green",
    )
    return True


async def _context(app: CommandHost, argument: str) -> bool:
    from gosling.agent.context_report import format_context_report, report_for_agent

    for line in format_context_report(report_for_agent(app.agent, app.session)).splitlines():
        app.renderer.line(line)
    return True


async def _hints(app: CommandHost, argument: str) -> bool:
    from gosling.agent.cli.hints_cmd import format_report, report_for_agent

    try:
        report = report_for_agent(app.agent)
    except (OSError, ValueError) as exc:
        app.renderer.error(f"cannot read hint files: {exc}")
        return True
    for line in format_report(report).splitlines():
        app.renderer.line(line)
    loaded = app.session.hints.loaded
    if loaded:
        app.renderer.line("subdirectory hints loaded in this session:")
        for hint in loaded:
            app.renderer.line(f"  {hint.path}  {hint.size_bytes:,} bytes")
    else:
        app.renderer.info("no subdirectory hints loaded yet (they load when a tool touches one)")
    return True


async def _sessions(app: CommandHost, argument: str) -> bool:
    store = app.runtime.store
    if store is None:
        app.renderer.error("sessions are not stored")
        return True
    current = app.session.id
    for record in store.list_sessions(limit=10):
        mark = "*" if record.id == current else " "
        updated = datetime.fromtimestamp(record.updated_at).strftime("%m-%d %H:%M")
        name = record.name or "(unnamed)"
        app.renderer.line(
            f"{mark} {record.id}  {updated}  {record.message_count:>4} msgs  {name}  "
            f"{record.working_dir}"
        )
    app.renderer.info("/resume ID continues one of them; * marks this session")
    return True


async def _resume(app: CommandHost, argument: str) -> bool:
    from gosling.sessions import SessionStoreError

    store = app.runtime.store
    if store is None:
        app.renderer.error("sessions are not stored")
        return True
    target = argument or _latest_other(app)
    if target is None:
        app.renderer.error("no other session in this directory; /sessions lists them all")
        return True
    if target == app.session.id:
        app.renderer.info("That is the current session.")
        return True
    try:
        await app.switch_to(target)
    except SessionStoreError as exc:
        app.renderer.error(str(exc))
    return True


def _latest_other(app: CommandHost) -> str | None:
    store = app.runtime.store
    assert store is not None
    here = app.agent.working_dir
    for record in store.list_sessions(limit=50):
        if record.id != app.session.id and record.working_dir == here:
            return record.id
    return None


COMMANDS: dict[str, SlashCommand] = {
    "/help": SlashCommand("/help", "this list", _help),
    "/compact": SlashCommand(
        "/compact [focus]", "summarize the conversation now (focus: what to keep)", _compact
    ),
    "/clear": SlashCommand("/clear", "start the model afresh (the history is kept)", _clear),
    "/context": SlashCommand("/context", "where the context window goes", _context),
    "/mode": SlashCommand("/mode [auto|approve|smart_approve|chat]", "tool permissions", _mode),
    "/model": SlashCommand("/model [name]", "show or switch the model", _model),
    "/hints": SlashCommand("/hints", "the hint files loaded", _hints),
    "/sessions": SlashCommand("/sessions", "recent sessions", _sessions),
    "/resume": SlashCommand("/resume [ID]", "continue another session", _resume),
    "/exit": SlashCommand("/exit, /quit", "leave (also Ctrl-D, or `quit` alone)", _exit),
}
ALIASES = {"/quit": "/exit", "/q": "/exit", "/?": "/help"}


LEAVE_WORDS = frozenset({"quit", "exit"})
"""Typed alone on the line, these leave like `/exit` instead of going to the model."""


def parse(text: str) -> tuple[str, str]:
    """`"/compact keep the API"` -> `("/compact", "keep the API")`."""
    name, _, argument = text.strip().partition(" ")
    return ALIASES.get(name.lower(), name.lower()), argument.strip()


async def dispatch(app: CommandHost, text: str) -> bool:
    """Run one slash command; False means leave the session."""
    name, argument = parse(text)
    command = COMMANDS.get(name)
    if command is None:
        close = difflib.get_close_matches(name, list(COMMANDS), n=1)
        hint = f" Did you mean {close[0]}?" if close else ""
        app.renderer.error(f"unknown command {name}.{hint} /help lists them.")
        return True
    return await command.run(app, argument)


def argument_choices(app: CommandHost, command: str) -> Iterable[str]:
    """Tab completions for a command's argument."""
    if command == "/mode":
        return MODES
    if command == "/resume" and app.runtime.store is not None:
        return [s.id for s in app.runtime.store.list_sessions(limit=20)]
    return ()
