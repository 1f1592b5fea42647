"""The input line and the approval question, both prompt_toolkit.

Input: Enter sends; Esc+Enter (or Alt+Enter) starts a new line, and a bracketed paste keeps
its newlines; history lives in `<state dir>/history`; slash commands complete with Tab.
Ctrl-C clears the line (on an empty line the app says how to leave); Ctrl-D on an empty line
leaves; Enter on an empty line does nothing. The status line is the prompt's bottom toolbar.

Approval: one key, no Enter: `y` runs the call once, `n` (or Esc) declines it, `a` allows
that tool for the rest of the session. Ctrl-C declines and interrupts the turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from gosling.agent.cli.interactive.terminal import Terminal

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.completion import CompleteEvent, Completer, Completion
    from prompt_toolkit.document import Document

Answer = Literal["yes", "no", "always", "interrupt"]
PROMPT = "› "
CONTINUATION = "· "


def make_prompt_session(
    terminal: Terminal,
    history_file: Path | None,
    *,
    toolbar: Callable[[], str],
    commands: Sequence[str],
    arguments: Callable[[str], Iterable[str]],
) -> PromptSession[str]:
    """The main input line; `arguments(command)` lists completions for a command's argument."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.application import get_app
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("enter", filter=Condition(lambda: not get_app().current_buffer.text.strip()))
    def _nothing_to_send(event: KeyPressEvent) -> None:
        """Enter on an empty line does nothing: the Enter people press after an approval
        key (`y⏎`) must not print another, empty, prompt line."""

    @bindings.add("c-c")
    def _clear_or_interrupt(event: KeyPressEvent) -> None:
        """Ctrl-C clears a typed line; on an empty line it reaches the app."""
        if event.current_buffer.text:
            event.current_buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt(), style="class:aborting")

    if history_file is not None:
        history_file.parent.mkdir(parents=True, exist_ok=True)
        history: FileHistory | InMemoryHistory = FileHistory(str(history_file))
    else:
        history = InMemoryHistory()
    return PromptSession(
        PROMPT,
        history=history,
        key_bindings=bindings,
        completer=_slash_completer(commands, arguments),
        complete_while_typing=False,
        bottom_toolbar=lambda: " " + toolbar(),
        prompt_continuation=lambda width, line, soft: CONTINUATION.rjust(width),
        multiline=False,
        enable_history_search=False,
        input=terminal.pt_input,
        output=terminal.pt_output,
        erase_when_done=False,
    )


async def ask_approval(
    terminal: Terminal, question: str, always: str | None = "this tool"
) -> Answer:
    """One keypress: y / n / a (Esc = no, Ctrl-C = interrupt the turn). `always` says what
    "a" would allow from now on; None offers no "always"."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.layout import Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    bindings = KeyBindings()

    def answer(keys: tuple[str, ...], result: Answer) -> None:
        for key in keys:

            @bindings.add(key)
            def _answer(event: KeyPressEvent) -> None:
                event.app.exit(result=result)

    answer(("y", "Y"), "yes")
    answer(("n", "N", "escape", "c-d"), "no")
    if always is not None:
        answer(("a", "A"), "always")
    answer(("c-c",), "interrupt")

    @bindings.add("<any>")
    def _ignore(event: KeyPressEvent) -> None:
        """Other keys do nothing: a stray Enter must not approve or decline."""

    choices = " [y]es / [n]o" + (f" / [a]lways {always}" if always is not None else "")
    control = FormattedTextControl(question + choices + ": ")
    app: Application[Answer] = Application(
        layout=Layout(Window(control, height=1, always_hide_cursor=False)),
        key_bindings=bindings,
        input=terminal.pt_input,
        output=terminal.pt_output,
        erase_when_done=True,
    )
    return await app.run_async(handle_sigint=False)


async def ask_yes_no(terminal: Terminal, question: str) -> bool:
    """One keypress: y is yes; n, Enter, Esc, Ctrl-C and Ctrl-D are no."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.layout import Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    bindings = KeyBindings()

    @bindings.add("y")
    @bindings.add("Y")
    def _yes(event: KeyPressEvent) -> None:
        event.app.exit(result=True)

    @bindings.add("<any>")
    def _no(event: KeyPressEvent) -> None:
        event.app.exit(result=False)

    for key in ("enter", "escape", "c-c", "c-d"):
        bindings.add(key)(_no)
    app: Application[bool] = Application(
        layout=Layout(Window(FormattedTextControl(question), height=1)),
        key_bindings=bindings,
        input=terminal.pt_input,
        output=terminal.pt_output,
        erase_when_done=True,
    )
    return await app.run_async(handle_sigint=False)


def _slash_completer(
    commands: Sequence[str], arguments: Callable[[str], Iterable[str]]
) -> Completer:
    """Completes `/command` names, then the argument of commands that have choices."""
    from prompt_toolkit.completion import Completer, Completion

    class SlashCompleter(Completer):
        def get_completions(
            self, document: Document, complete_event: CompleteEvent
        ) -> Iterable[Completion]:
            text = document.text_before_cursor
            if not text.startswith("/") or "\n" in text:
                return
            if " " not in text:
                for name in commands:
                    if name.startswith(text):
                        yield Completion(name, start_position=-len(text))
                return
            command, _, partial = text.partition(" ")
            for choice in arguments(command):
                if choice.startswith(partial):
                    yield Completion(choice, start_position=-len(partial))

    return SlashCompleter()
