"""The slash commands an ACP session offers (advertised as available commands).

They do what `gosling session`'s commands do, through the same agent methods: `/compact`
and `/clear` are kept in the history as user-only `command` messages (the model never sees
them; a resumed `gosling session` shows them), the others only answer. Sessions and
leaving are the editor's business, so `/sessions`, `/resume` and `/exit` are not offered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp import RequestError
from acp.schema import PromptResponse

from gosling.agent.acp import session_config, updates

if TYPE_CHECKING:
    from gosling.agent.acp.live import LiveSession

COMMAND_KIND = "command"
"""`kind` of the history messages a command leaves (the same as `gosling session`'s)."""
CLEARED_TEXT = "Conversation cleared: the model starts afresh. The history is kept."
AVAILABLE: tuple[tuple[str, str, str | None], ...] = (
    ("compact", "Summarize the conversation now to free context", "what to keep (optional)"),
    ("clear", "Start the model afresh (the history is kept)", None),
    ("context", "Show where the context window goes", None),
    ("hints", "Show the hint files loaded for this project", None),
    ("mode", "Show or set the permission mode", " | ".join(session_config.MODE_IDS)),
    ("model", "Show or switch the model", "model name (optional)"),
    ("help", "List these commands", None),
)


async def run_command(live: LiveSession, text: str) -> PromptResponse:
    name, _, argument = text.strip().partition(" ")
    name, argument = name.lower().removeprefix("/"), argument.strip()
    handlers = {
        "compact": _compact,
        "clear": _clear,
        "context": _context,
        "hints": _hints,
        "mode": _mode,
        "model": _model,
        "help": _help,
    }
    handler = handlers.get(name)
    if handler is None:
        known = ", ".join(f"/{n}" for n, _, _ in AVAILABLE)
        live.post(updates.agent_text(f"Unknown command /{name}. The commands are: {known}."))
    else:
        live.flush_notes()
        try:
            await handler(live, argument)
        except RequestError as exc:
            live.post(updates.agent_text(str(exc)))
    return PromptResponse(stop_reason="end_turn")


def _record(live: LiveSession, command: str, reply: str) -> None:
    from gosling.conversation import Message

    live.session.append(
        Message.user(command).user_only().with_kind(COMMAND_KIND),
        Message.assistant(reply).user_only().with_kind(COMMAND_KIND),
    )


async def _compact(live: LiveSession, argument: str) -> None:
    from gosling.agent.events import CompactionFinished
    from gosling.context_mgmt import CompactionFailed
    from gosling.providers import ProviderError

    session = live.session
    if not any(m.metadata.agent_visible for m in session.messages):
        live.post(updates.agent_text("Nothing to compact yet."))
        return
    command = f"/compact {argument}".rstrip()
    try:
        async for event in live.runtime.agent.compact(
            session, trigger="manual", focus=argument or None
        ):
            if isinstance(event, CompactionFinished):
                reply = (
                    f"Compaction complete: ~{event.tokens_before:,} → "
                    f"~{event.tokens_after:,} tokens."
                )
                live.post_usage(event.tokens_after)
            else:
                live.on_event(event)
    except (CompactionFailed, ProviderError) as exc:
        reply = f"Compaction failed: {exc}"
    _record(live, command, reply)
    live.post(updates.agent_text(reply))


async def _clear(live: LiveSession, argument: str) -> None:
    live.runtime.agent.clear(live.session)
    _record(live, "/clear", CLEARED_TEXT)
    live.post(updates.agent_text(CLEARED_TEXT))
    live.post_usage()


async def _context(live: LiveSession, argument: str) -> None:
    from gosling.agent.context_report import format_context_report, report_for_agent

    report = format_context_report(report_for_agent(live.runtime.agent, live.session))
    live.post(updates.agent_text(f"```\n{report}\n```"))


async def _hints(live: LiveSession, argument: str) -> None:
    from gosling.agent.cli.hints_cmd import format_report, report_for_agent

    try:
        report = report_for_agent(live.runtime.agent)
    except (OSError, ValueError) as exc:
        live.post(updates.agent_text(f"Cannot read the hint files: {exc}"))
        return
    lines = [format_report(report)]
    loaded = live.session.hints.loaded
    if loaded:
        lines.append("Subdirectory hints loaded in this session:")
        lines += [f"  {hint.path}  {hint.size_bytes:,} bytes" for hint in loaded]
    live.post(updates.agent_text("```\n" + "\n".join(lines) + "\n```"))


async def _mode(live: LiveSession, argument: str) -> None:
    if argument:
        mode = argument.lower().replace("-", "_")
        mode = "smart_approve" if mode == "smart" else mode
        live.set_mode(mode)
    choices = ", ".join(session_config.MODE_IDS)
    live.post(updates.agent_text(f"Mode: {live.mode} (choices: {choices})."))


async def _model(live: LiveSession, argument: str) -> None:
    if argument:
        await live.set_model(argument)
    config = live.runtime.provider.model_config
    live.post(
        updates.agent_text(
            f"Model: {live.runtime.provider.name}/{config.model} "
            f"(context window {config.context_limit:,} tokens)."
        )
    )


async def _help(live: LiveSession, argument: str) -> None:
    lines = [f"- `/{name}` {description}" for name, description, _ in AVAILABLE]
    lines.append("Start a message with // to send text that begins with a slash.")
    live.post(updates.agent_text("\n".join(lines)))
