"""`InteractiveSession`: the read–reply loop of `gosling session`.

One prompt, one turn at a time. A turn runs in its own task so Ctrl-C (SIGINT while the
terminal is in cooked mode) cancels the turn, never the app: the reply loop answers every open
tool call and the session stays valid. Tool calls that need approval stop the live output and
ask for one key. Slash commands live in `commands.py` and talk to this class through its
`CommandHost` protocol. An interrupted exchange is closed by `Agent.reply` alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gosling.agent.cli.interactive.change_preview import preview
from gosling.agent.cli.interactive.commands import COMMANDS, LEAVE_WORDS, argument_choices, dispatch
from gosling.agent.cli.interactive.prompt import ask_approval, make_prompt_session
from gosling.agent.cli.interactive.render import INTERRUPTED_TEXT, Renderer
from gosling.agent.cli.interactive.shell_prefix import offered_prefix, shell_rule
from gosling.agent.cli.interactive.status import StatusInfo, status_text
from gosling.agent.cli.interactive.terminal import Terminal
from gosling.agent.cli.interactive.transcript import COMMAND_KIND, recent_exchanges
from gosling.agent.events import Event, Notice
from gosling.agent.permissions.rules import is_shell_tool
from gosling.agent.sdk_warm_up import warm_up_sdk
from gosling.conversation import Message, ToolRequest

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession

    from gosling.agent.agent import Agent
    from gosling.agent.runtime import Runtime
    from gosling.agent.session import AgentSession

RECENT_EXCHANGES = 3
CHOICES_KEY = "interactive.choices"
"""Extension data key of the session's `/model` and `/mode` choices."""
KEYS_HELP = "/help · Esc+Enter: new line · Ctrl-C: interrupt · Ctrl-D: quit"


class InteractiveSession:
    def __init__(
        self,
        runtime: Runtime,
        terminal: Terminal,
        *,
        history_file: Path | None = None,
        pinned: frozenset[str] = frozenset(),
    ) -> None:
        self.runtime = runtime
        self.pinned = pinned
        """Choices given as flags ("provider", "model", "mode"): a resumed session's own
        `/model` and `/mode` choices do not override them."""
        self.terminal = terminal
        self.renderer = Renderer(terminal, status=self.status_line)
        self.history_file = history_file
        self._session: AgentSession | None = None
        self.status = StatusInfo("", "", 0, 0, 0.8)
        self.always_allowed: set[str] = set()
        """Tools the user allowed for the rest of this session (`a` at the approval prompt)."""
        self.session_rules: list[str] = []
        """Shell allow rules (`developer__shell(git log)`) from `a` for this session."""
        self.agent.approver = self.approve
        self._prompt: PromptSession[str] | None = None
        self._running: asyncio.Future[Any] | None = None
        """The turn or compaction that Ctrl-C would cancel."""
        self._sigint_guard = False

    @property
    def agent(self) -> Agent:
        return self.runtime.agent

    @property
    def session(self) -> AgentSession:
        assert self._session is not None, "open a session first"
        return self._session

    # -- sessions -------------------------------------------------------------------------------

    async def start(self, *, resume_id: str | None = None, name: str = "") -> None:
        """Open a new session, or resume `resume_id` (with its model and mode) and show its
        last exchanges."""
        if resume_id is None:
            self._session = self.agent.new_session(name)
        else:
            self._session = self.agent.resume_session(resume_id)
            await self.restore_choices()
        self.refresh_status()
        self.banner()
        if resume_id is not None:
            self._note_moved_session(resume_id)
            self.show_recent()

    def _note_moved_session(self, session_id: str) -> None:
        store = self.runtime.store
        if store is None:
            return
        started_in = store.get(session_id).working_dir
        if started_in != self.agent.working_dir:
            self.renderer.note(
                f"this session was started in {started_in}; tools now run in "
                f"{self.agent.working_dir}"
            )

    def remember_choices(self) -> None:
        """Keep the `/model` and `/mode` choices with the session, so resuming restores them."""
        provider = self.agent.provider
        self.session.set_extension_data(
            CHOICES_KEY,
            {
                "provider": provider.name,
                "model": provider.model_config.model,
                "mode": self.agent.permissions.mode.value,
            },
        )

    async def restore_choices(self) -> None:
        """Bring back the model and mode this session last chose (flags win); a choice that
        no longer works is named and the current one kept."""
        choices = self.session.extension_data.get(CHOICES_KEY)
        if not isinstance(choices, dict):
            return
        mode = choices.get("mode")
        if "mode" not in self.pinned and isinstance(mode, str):
            try:
                self.agent.set_mode(mode)
            except ValueError as exc:
                self.renderer.note(f"cannot restore mode {mode}: {exc}")
        model, provider = choices.get("model"), choices.get("provider")
        current = self.agent.provider
        wanted = isinstance(model, str) and model and provider == current.name
        if wanted and "model" not in self.pinned and model != current.model_config.model:
            from gosling.agent.config import ConfigError
            from gosling.providers import ProviderError

            assert isinstance(model, str)
            try:
                await self.runtime.switch_model(self.session, model)
            except (ConfigError, ProviderError, ValueError) as exc:
                self.renderer.note(f"cannot restore model {model}: {exc}")
        self.refresh_status()

    async def switch_to(self, session_id: str) -> None:
        """`/resume`: continue another stored session (the current one is kept)."""
        previous = self._session
        self._session = self.agent.resume_session(session_id)
        if previous is not None:
            await previous.pipeline.close()
            self._discard_if_empty(previous)
        self.always_allowed.clear()
        self.session_rules.clear()
        await self.restore_choices()
        provider = self.agent.provider
        self.renderer.info(
            f"Resumed session {session_id} · {provider.name}/{provider.model_config.model} · "
            f"mode {self.agent.permissions.mode.value}."
        )
        self._note_moved_session(session_id)
        self.show_recent()

    async def close(self) -> None:
        """Stop the session's background work and release it; an untouched new session is
        not kept."""
        if self._session is not None:
            for event in await self.agent.end_session(self._session, "prompt_input_exit"):
                if isinstance(event, Notice):
                    self.renderer.note(event.text)
            await self._session.pipeline.close()
            kept = self._discard_if_empty(self._session)
            if kept and self._session.id is not None:
                session_id = self._session.id
                self.renderer.info(
                    f"Session {session_id} saved. Continue it with: "
                    f"gosling session --resume {session_id}"
                )
            self._session = None

    def _name_from(self, prompt: str) -> None:
        from gosling.agent.cli.session_names import session_name_from

        store, session_id = self.runtime.store, self.session.id
        if store is None or session_id is None:
            return
        if not store.get(session_id).name:
            store.rename(session_id, session_name_from(prompt), by_user=False)

    def _discard_if_empty(self, session: AgentSession) -> bool:
        store = self.runtime.store
        if session.messages or store is None or session.id is None:
            session.release()
            return True
        store.delete(session.id)
        return False

    def record_command(self, command: str, reply: str) -> None:
        """Keep a slash command and its outcome in the history the user sees (never the
        model's)."""
        self.session.append(
            Message.user(command).user_only().with_kind(COMMAND_KIND),
            Message.assistant(reply).user_only().with_kind(COMMAND_KIND),
        )

    # -- display --------------------------------------------------------------------------------

    def banner(self) -> None:
        provider = self.agent.provider
        where = str(self.agent.working_dir)
        home = str(Path.home())
        if where.startswith(home + "/"):
            where = "~" + where[len(home) :]
        self.renderer.line(
            f"gosling · {provider.name}/{provider.model_config.model} · "
            f"mode {self.agent.permissions.mode.value} · {where}",
            "bold",
        )
        self.renderer.info(f"session {self.session.id or '(not stored)'} · {KEYS_HELP}")

    def show_recent(self) -> None:
        recent = recent_exchanges(self.session.messages, RECENT_EXCHANGES)
        if not recent.entries:
            self.renderer.info("(no messages yet)")
            return
        if recent.earlier_exchanges:
            self.renderer.info(f"… {recent.earlier_exchanges} earlier exchanges")
        for entry in recent.entries:
            if entry.kind == "user":
                self.renderer.user_text(entry.text)
            elif entry.kind == "assistant":
                self.renderer.markdown(entry.text)
            elif entry.kind == "tool":
                self.renderer.line(f"● {entry.text}", "dim")
            elif entry.kind == "command":
                self.renderer.line(f"› {entry.text}", "dim")
            else:
                self.renderer.info(f"  {entry.text}")
        self.renderer.line("─" * 24 + " resumed " + "─" * 24, "dim")

    def status_line(self, width: int | None = None) -> str:
        """The status shortened to `width` columns (None: in full)."""
        return status_text(self.status, width)

    def toolbar(self) -> str:
        """The status as the prompt's bottom toolbar: as wide as the terminal."""
        width: int | None = None
        if self._prompt is not None:
            with contextlib.suppress(OSError):
                width = self._prompt.app.output.get_size().columns - 2  # the leading space
        return status_text(self.status, width)

    def refresh_status(self) -> None:
        """Recompute the status from the agent (after opening, `/clear`, `/model`, `/mode`)."""
        from gosling.agent.context_report import report_for_agent

        report = report_for_agent(self.agent, self.session)
        provider = self.agent.provider
        self.status = StatusInfo(
            model=provider.model_config.model,
            mode=self.agent.permissions.mode.value,
            context_tokens=report.current_tokens,
            context_limit=report.context_limit,
            threshold=report.compaction.threshold,
            auto_compact=report.compaction.automatic,
        )

    def on_event(self, event: Event) -> None:
        self.status = self.status.after(event)
        self.renderer.event(event)

    # -- the loop -------------------------------------------------------------------------------

    async def run(self, first_prompt: str = "") -> int:
        """Send `first_prompt` if given, then read and answer until /exit or Ctrl-D.
        Returns the exit code."""
        _warm_up(self.agent.provider.name)
        self._prompt = make_prompt_session(
            self.terminal,
            self.history_file,
            toolbar=self.toolbar,
            commands=sorted(COMMANDS),
            arguments=lambda command: argument_choices(self, command),
        )
        loop = asyncio.get_running_loop()
        try:
            if first_prompt.strip():
                self.renderer.user_text(first_prompt)
                await self.send(first_prompt.strip())
                self.renderer.line()
            while True:
                try:
                    text = await self._prompt.prompt_async()
                except KeyboardInterrupt:
                    self.renderer.info("(Ctrl-D or /exit quits)")
                    continue
                except EOFError:
                    break
                finally:
                    # The prompt drops its SIGINT handler on the way out; between prompts a
                    # Ctrl-C cancels the running work, if any, and never kills the app.
                    self._sigint_guard = _on_sigint(loop, self._interrupt)
                text = text.strip()
                if not text:
                    continue
                if text.lower() in LEAVE_WORDS:
                    break
                if text.startswith("/") and not text.startswith("//"):
                    if not await dispatch(self, text):
                        break
                else:
                    await self.send(text.removeprefix("/"))
                self.renderer.line()
        finally:
            if self._sigint_guard:
                loop.remove_signal_handler(signal.SIGINT)
            await self.close()
        return 0

    def _interrupt(self) -> None:
        if self._running is not None:
            self._running.cancel()

    async def send(self, text: str) -> None:
        """One turn: the user's `text` in, the reply rendered as it streams. The first
        prompt of a session nobody named names it, as in `gosling run`."""
        session = self.session
        if not session.messages:
            self._name_from(text)

        async def consume() -> None:
            async for event in self.agent.reply(session, text):
                self.on_event(event)

        await self.interruptible(consume())

    async def interruptible(self, work: Awaitable[Any], label: str = "thinking") -> bool:
        """Run `work` with Ctrl-C bound to cancelling it; False when it was cancelled
        before it could finish on its own terms."""
        self.renderer.begin_turn(label)
        task = asyncio.ensure_future(work)
        self._running = task
        if not self._sigint_guard:
            self._sigint_guard = _on_sigint(asyncio.get_running_loop(), self._interrupt)
        try:
            await asyncio.wait([task])
        except asyncio.CancelledError:
            task.cancel()
            await asyncio.wait([task])
            raise
        finally:
            self._running = None
            self.renderer.end_turn()
        if task.cancelled():
            self.renderer.line(INTERRUPTED_TEXT, "yellow")
            return False
        task.result()
        return True

    async def approve(self, request: ToolRequest, reason: str) -> bool:
        """The agent's approver: ask about one call. An edit or write shows its diff first;
        "always" remembers the tool, or for a shell command its prefix (`git log`), as a
        rule of this session."""
        if request.name in self.always_allowed:
            self.renderer.info(f"  ✓ {request.name} is allowed for this session")
            return True
        command = request.arguments.get("command")
        shell = is_shell_tool(request.name) and isinstance(command, str)
        if shell and self._rules_allow(request, self.session_rules):
            self.renderer.info("  ✓ allowed by a rule of this session")
            return True
        prefix = self._offered_prefix(request) if shell else None
        self.renderer.pause()
        self.renderer.line(f"? {request.name} needs approval: {reason}", "yellow")
        for line in preview(request.name, request.arguments, self.agent.working_dir) or ():
            self.renderer.line(line.text, line.style)
        try:
            answer = await ask_approval(self.terminal, "  Allow?", _always_label(shell, prefix))
        finally:
            self.renderer.resume()
        if answer == "interrupt":
            self.renderer.info("  ✗ declined")
            raise asyncio.CancelledError
        if answer == "always" and shell and prefix is not None:
            rule = shell_rule(request.name, prefix)
            self.session_rules.append(rule)
            self.renderer.info(f"  ✓ allowed; {rule} will not ask again this session")
            return True
        if answer == "always":
            self.always_allowed.add(request.name)
            self.renderer.info(f"  ✓ allowed; {request.name} will not ask again this session")
            return True
        self.renderer.info("  ✓ allowed once" if answer == "yes" else "  ✗ declined")
        return answer == "yes"

    def _offered_prefix(self, request: ToolRequest) -> str | None:
        """The prefix "always" offers: the command's (`git log`) when the permission checker
        reads its rule as covering this call, else the exact command, else none."""
        command = str(request.arguments.get("command", ""))
        prefix = offered_prefix(command)
        if prefix is None:
            return None  # compound commands, redirections: never "always"
        for candidate in dict.fromkeys((prefix, command.strip())):
            if self._rules_allow(request, [shell_rule(request.name, candidate)]):
                return candidate
        return None

    def _rules_allow(self, request: ToolRequest, rules: list[str]) -> bool:
        """Whether allow `rules` cover the call, as the permission checker reads them (so
        `git log && rm -rf x` is not covered by `developer__shell(git log)`)."""
        if not rules:
            return False
        from gosling.agent.permissions.decide import decide
        from gosling.agent.permissions.rules import PermissionMode, Verdict, rules_from_lists

        decision = decide(
            request.name,
            request.arguments,
            None,
            PermissionMode.APPROVE,
            rules_from_lists(allow=rules),
            self.agent.working_dir,
        )
        return decision.verdict is Verdict.ALLOW


def _always_label(shell: bool, prefix: str | None) -> str | None:
    """What "always" would allow: the tool, a shell prefix, or nothing (compound commands)."""
    if not shell:
        return "this tool"
    return f"`{prefix}` commands" if prefix is not None else None


def _warm_up(provider_name: str) -> None:
    """Import the provider's SDK while the user types, so the first reply starts at once."""
    warm_up_sdk(provider_name)


def _on_sigint(loop: asyncio.AbstractEventLoop, callback: Callable[[], Any]) -> bool:
    """Bind SIGINT to `callback` while a turn runs (only possible in the main thread)."""
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGINT, callback)
        return True
    return False
