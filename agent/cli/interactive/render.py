"""Show a turn as it happens: streamed markdown, one line per tool call, folded results.

Styled output (a terminal) renders markdown through `MarkdownStream` inside a rich `Live`
region that also carries a spinner and the status line; plain output (a pipe, `NO_COLOR`)
writes the text as it arrives and the same one-line tool summaries, without colour.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from gosling.agent.cli.interactive.markdown_stream import MarkdownStream
from gosling.agent.cli.interactive.terminal import Terminal
from gosling.agent.events import (
    CompactionFinished,
    CompactionStarted,
    ContextTrimmed,
    ErrorEvent,
    Event,
    HintsLoaded,
    MessageAdded,
    Notice,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    TurnFinished,
)
from gosling.conversation import Message, ToolResponse

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.live import Live
    from rich.segment import Segment

FOLD_LINES = 5
"""Lines of a tool result shown before the rest is folded into a line count."""
ARGS_CHARS = 100
REFRESH_SECONDS = 1 / 15
INTERRUPTED_TEXT = "⏹ Interrupted. The conversation is saved; say what to do next."


def describe_call(name: str, arguments: Mapping[str, Any], limit: int = ARGS_CHARS) -> str:
    """`name  args` on one line: a lone string argument as is, otherwise `key=value, ...`."""
    values = list(arguments.values())
    if len(values) == 1 and isinstance(values[0], str):
        shown = values[0]
    else:
        shown = ", ".join(
            f"{key}={value if isinstance(value, str) else json.dumps(value)}"
            for key, value in arguments.items()
        )
    shown = " ".join(shown.split())
    if len(shown) > limit:
        shown = shown[: limit - 1] + "…"
    return f"{name}  {shown}" if shown else name


def fold_output(text: str, max_lines: int = FOLD_LINES, width: int = 200) -> tuple[list[str], int]:
    """The first `max_lines` lines of `text` (each cut at `width`) and how many are hidden."""
    lines = text.rstrip("\n").splitlines() if text.strip() else []
    shown = [line if len(line) <= width else line[: width - 1] + "…" for line in lines[:max_lines]]
    return shown, max(len(lines) - max_lines, 0)


def _cut_line(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


class _LiveTail:
    """The live region: the open markdown block, then a spinner with the status line."""

    def __init__(self, status: Callable[[int | None], str]) -> None:
        self.lines: list[list[Segment]] = []
        self.label = "thinking"
        self._status = status
        self._spinner: Any = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment
        from rich.spinner import Spinner
        from rich.text import Text

        for line in self.lines:
            yield from line
            yield Segment.line()
        if self._spinner is None:
            self._spinner = Spinner("dots", style="cyan")
        label = f"{self.label}…  "
        room = options.max_width - len(label) - 3  # the spinner and its space
        status = self._status(room) if room >= 12 else ""
        text = _cut_line(label + status, options.max_width - 3)
        self._spinner.text = Text(text, style="dim")
        yield self._spinner


class Renderer:
    def __init__(
        self, terminal: Terminal, status: Callable[[int | None], str] = lambda width: ""
    ) -> None:
        from rich.console import Console

        self.terminal = terminal
        self.styled = terminal.styled
        self.console = Console(
            file=terminal.out,
            force_terminal=self.styled,
            color_system="auto" if self.styled else None,
            no_color=not self.styled,
            highlight=False,
            markup=False,
            emoji=False,
            width=terminal.width or (None if self.styled else 100),
            soft_wrap=not self.styled,
        )
        self._status = status
        self._tail = _LiveTail(status)
        self._live: Live | None = None
        self._stream: MarkdownStream[list[Segment]] | None = None
        self._plain_text_open = False
        self._last_refresh = 0.0
        self._calls: dict[str, str] = {}

    # -- plain lines ----------------------------------------------------------------------------

    def line(self, text: str = "", style: str = "", *, soft_wrap: bool = False) -> None:
        """One line; `soft_wrap` leaves wrapping to the terminal, so a long path or a command
        to copy is never cut by an inserted newline."""
        from rich.text import Text

        self.console.print(
            Text(text, style=style) if self.styled else text, soft_wrap=soft_wrap or None
        )

    def info(self, text: str) -> None:
        self.line(text, "dim")

    def note(self, text: str) -> None:
        self.line(f"note: {text}", "yellow", soft_wrap=True)

    def error(self, text: str) -> None:
        """An error, redacted: provider error bodies may echo the key."""
        from gosling.redact import redact

        self.line(f"error: {redact(text)}", "bold red", soft_wrap=True)

    def markdown(self, text: str) -> None:
        """A whole markdown text (earlier replies shown on resume)."""
        if self.styled:
            from rich.markdown import Markdown

            self.console.print(Markdown(text))
        else:
            self.line(text.rstrip("\n"))

    def user_text(self, text: str) -> None:
        first, *rest = text.rstrip("\n").splitlines() or [""]
        self.line(f"› {first}", "bold")
        for extra in rest:
            self.line(f"  {extra}", "bold")

    # -- a turn ---------------------------------------------------------------------------------

    def begin_turn(self, label: str = "thinking") -> None:
        self._calls = {}
        self._tail.label = label
        if self.styled:
            self._stream = self._new_stream()
            self._start_live()

    def end_turn(self) -> None:
        self._finish_text()
        self._stop_live()
        self._stream = None

    def pause(self) -> None:
        """Give the terminal to a prompt (an approval question)."""
        self._finish_text()
        self._stop_live()

    def resume(self) -> None:
        if self.styled and self._stream is not None:
            self._start_live()

    def event(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self._text(event.text)
        elif isinstance(event, ThinkingDelta):
            self._tail.label = "thinking"
        elif isinstance(event, MessageAdded):
            self._message(event.message)
        elif isinstance(event, ToolCall):
            self._finish_text()
            self._calls[event.id] = event.name
            self._tail.label = f"running {event.name}"
            self._tool_line(event.name, event.arguments)
        elif isinstance(event, CompactionStarted):
            self._finish_text()
            self._tail.label = "compacting"
            self.info(f"⋯ compacting the conversation (~{event.tokens_before:,} tokens)…")
        elif isinstance(event, CompactionFinished):
            receipt = f" · {event.receipt_line} · /context lists it" if event.receipt_line else ""
            self.info(
                f"⋯ compacted: ~{event.tokens_before:,} → ~{event.tokens_after:,} tokens{receipt}"
            )
            self._tail.label = "thinking"
        elif isinstance(event, ContextTrimmed):
            count = len(event.tool_ids)
            if event.strategy == "fold":
                calls = "call" if count == 1 else "calls"
                self.info(f"⋯ folded {count} old tool {calls} into one note to save context")
            else:
                verb = "masked" if event.strategy == "mask" else "summarized"
                results = "result" if count == 1 else "results"
                self.info(f"⋯ {verb} {count} old tool {results} to save context")
        elif isinstance(event, HintsLoaded):
            self.info(f"⋯ loaded hints from {', '.join(event.directories)}")
        elif isinstance(event, Notice):
            self._finish_text()
            self.note(event.text)
        elif isinstance(event, ErrorEvent):
            self._finish_text()
            self.error(event.message)
        elif isinstance(event, TurnFinished):
            self._finished(event)

    def tool_results(self, responses: Iterable[ToolResponse]) -> None:
        for response in responses:
            shown, hidden = fold_output(response.text())
            style = "red" if response.is_error else "dim"
            if not shown:
                shown = ["(no output)"]
            for index, text in enumerate(shown):
                self.line(("  ⎿  " if index == 0 else "     ") + text, style)
            if hidden:
                self.line(f"     … {hidden} more line{'s' if hidden != 1 else ''}", "dim")

    # -- internals ------------------------------------------------------------------------------

    def _tool_line(self, name: str, arguments: Mapping[str, Any]) -> None:
        described = describe_call(name, arguments)
        if not self.styled:
            self.line(f"● {described}")
            return
        from rich.text import Text

        text = Text("● ", style="cyan")
        text.append(name, style="bold")
        text.append(described[len(name) :], style="dim")
        self.console.print(text)

    def _message(self, message: Message) -> None:
        if message.role == "assistant":
            self._finish_text()
            self._tail.label = "thinking"
        elif message.tool_responses:
            self.tool_results(message.tool_responses)
            self._tail.label = "thinking"

    def _finished(self, event: TurnFinished) -> None:
        self._finish_text()
        if event.stop_reason == "cancelled":
            self._stop_live()
            self.line(INTERRUPTED_TEXT, "yellow")
        elif event.stop_reason == "max_turns":
            self.note(f"stopped after {event.turns} model calls (max_turns); say 'go on'")

    def _text(self, delta: str) -> None:
        if not self.styled:
            self.terminal.out.write(delta)
            self.terminal.out.flush()
            self._plain_text_open = bool(delta) or self._plain_text_open
            return
        self._tail.label = "responding"
        if self._stream is None:
            self._stream = self._new_stream()
        self._stream.feed(delta)
        now = time.monotonic()
        if now - self._last_refresh >= REFRESH_SECONDS:
            self._last_refresh = now
            self._commit(self._stream.refresh())
            self._tail.lines = self._stream.live

    def _finish_text(self) -> None:
        if not self.styled:
            if self._plain_text_open:
                self.terminal.out.write("\n")
                self.terminal.out.flush()
                self._plain_text_open = False
            return
        if self._stream is not None and self._stream.text:
            self._commit(self._stream.refresh())
            self._tail.lines = []
            self._commit(self._stream.finish())

    def _commit(self, lines: list[list[Segment]]) -> None:
        if not lines:
            return
        from rich.segment import Segment, Segments

        segments = [s for line in lines for s in (*line, Segment.line())]
        self.console.print(Segments(segments), end="")

    def _new_stream(self) -> MarkdownStream[list[Segment]]:
        from rich.markdown import Markdown

        console = self.console

        def render(text: str) -> list[list[Segment]]:
            return console.render_lines(Markdown(text), console.options, pad=False)

        window = max(4, min(console.size.height // 2, 20))
        return MarkdownStream(
            render,
            window=window,
            blank=[],
            is_blank=lambda line: not "".join(s.text for s in line).strip(),
        )

    def _start_live(self) -> None:
        if self._live is not None:
            return
        from rich.live import Live

        self._live = Live(
            self._tail,
            console=self.console,
            transient=True,
            auto_refresh=True,
            refresh_per_second=12,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start()

    def _stop_live(self) -> None:
        if self._live is not None:
            self._tail.lines = []
            self._live.stop()
            self._live = None
