"""Renderers for headless runs: the answer on stdout, everything else on stderr.

- `text`: progress (tool calls, notices, intermediate text) on stderr, the final answer on
  stdout;
- `json`: one object on stdout at the end;
- `stream-json`: one event per line on stdout as it happens, ending with one `result` line.

Everything written passes the redactor first (`redact`): a provider error that echoes the
key, or a model that repeats one, never reaches the terminal or a CI log.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import IO, Any, Literal

from gosling.agent.cli.errors import error_line
from gosling.agent.cli.result_json import Denial, RunOutcome, result_object
from gosling.agent.cli.tool_summary import failed, summary
from gosling.agent.events import (
    CompactionFinished,
    CompactionStarted,
    Event,
    HintsLoaded,
    HookDecided,
    HookFailed,
    MessageAdded,
    Notice,
    PermissionRequest,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnFinished,
)
from gosling.redact import redact, redact_json

OutputFormat = Literal["text", "json", "stream-json"]
ERROR_STOP_REASONS = frozenset({"error", "context_exceeded", "hook_blocked"})
_SHOWN_HOOK_DECISIONS = frozenset({"deny", "ask", "block", "stop"})


class HeadlessRenderer:
    """Writes one run's output. `before_write` runs before every stderr line (the spinner
    clears its line there), so progress never lands after a spinner frame."""

    def __init__(
        self,
        output_format: OutputFormat,
        *,
        stdout: IO[str] | None = None,
        stderr: IO[str] | None = None,
        quiet: bool = False,
        before_write: Callable[[], None] | None = None,
    ) -> None:
        self.format = output_format
        self.out = stdout or sys.stdout
        self.err = stderr or sys.stderr
        self.quiet = quiet
        self.before_write = before_write
        self._pending_text = ""
        self.hook_decisions: list[dict[str, Any]] = []
        """What every hook decided, for the result (`RunOutcome.hook_decisions`)."""
        self.denials: list[Denial] = []
        """Tool calls refused in this run (the result's `permission_denials`)."""
        self.api_ms = 0.0
        """Time spent waiting on model calls (the result's `duration_api_ms`)."""
        self._call_started: float | None = None

    def start(self, info: dict[str, Any]) -> None:
        self._call_started = time.monotonic()
        if self.format == "stream-json":
            self._emit({"v": 1, "type": "init", **info})

    def event(self, event: Event) -> None:
        if isinstance(event, HookDecided):
            decision = event.to_json()
            for key in ("v", "type"):
                decision.pop(key)
            self.hook_decisions.append(decision)
        self._track(event)
        if self.format == "stream-json":
            if not isinstance(event, TurnFinished):
                self._emit(event.to_json())
            return
        if self.format == "text" and not self.quiet:
            self._progress(event)
        elif isinstance(event, HookFailed):
            self.note(f"warning: {event.text}")

    def _track(self, event: Event) -> None:
        if isinstance(event, PermissionRequest) and event.granted is False:
            self.denials.append(Denial(event.name, event.id, dict(event.arguments)))
        elif isinstance(event, MessageAdded):
            now = time.monotonic()
            if event.message.role == "assistant":
                if self._call_started is not None:
                    self.api_ms += (now - self._call_started) * 1000
                self._call_started = None
            else:
                self._call_started = now

    def finish(self, outcome: RunOutcome) -> None:
        """The end of the run: the result object (json, stream-json) or the answer (text).
        Every run ends here, a failed start included, so scripts always get one object."""
        payload = result_object(outcome)
        if self.format == "stream-json":
            self._emit({"v": 1, **payload})
        elif self.format == "json":
            self.out.write(redact_json(json.dumps(payload, default=str)) + "\n")
        else:
            if outcome.error and not self.quiet:
                self.note(f"error: {outcome.error}")
            if outcome.final_text:
                self.out.write(redact(outcome.final_text.rstrip("\n")) + "\n")
        self.out.flush()

    def fail(self, outcome: RunOutcome) -> None:
        """A run that could not start (a config error, no provider, a bad working dir): the
        error on stderr in every format, then the result object in json and stream-json."""
        if outcome.error:
            self.note(error_line(outcome.error))
        if self.format != "text":
            self.finish(outcome)

    def note(self, line: str) -> None:
        """One line of progress or diagnostics on stderr."""
        if self.before_write is not None:
            self.before_write()
        self.err.write(redact(line.rstrip("\n")) + "\n")
        self.err.flush()

    def _emit(self, payload: dict[str, Any]) -> None:
        self.out.write(redact_json(json.dumps(payload, default=str)) + "\n")
        self.out.flush()

    def _progress(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self._pending_text += event.text
            return
        line = self._progress_line(event)
        if line is not None:
            self.note(line)

    def _progress_line(self, event: Event) -> str | None:
        if isinstance(event, MessageAdded) and event.message.role == "assistant":
            # Narration before tool calls is progress; the last reply is the answer (stdout).
            text, self._pending_text = self._pending_text, ""
            if event.message.tool_requests and text.strip():
                return text.rstrip()
        elif isinstance(event, ToolCall):
            args = json.dumps(event.arguments)
            return f"● {event.name} {args[:200]}{'…' if len(args) > 200 else ''}"
        elif isinstance(event, ToolResult):
            mark = "✗" if failed(event.output, event.is_error) else "✓"
            return f"  {mark} {event.name}: {summary(event.output, event.is_error)}"
        elif isinstance(event, PermissionRequest) and event.granted is False:
            return f"  ⊘ {event.name} needs approval: {event.reason}"
        elif isinstance(event, CompactionStarted):
            return f"⋯ compacting ({event.trigger}, ~{event.tokens_before:,} tokens)"
        elif isinstance(event, CompactionFinished):
            receipt = f"; {event.receipt_line}" if event.receipt_line else ""
            return f"⋯ compacted to ~{event.tokens_after:,} tokens{receipt}"
        elif isinstance(event, HintsLoaded):
            return f"⋯ loaded hints from {', '.join(event.directories)}"
        elif isinstance(event, Notice):
            return f"note: {event.text}"
        elif isinstance(event, HookDecided) and event.decision in _SHOWN_HOOK_DECISIONS:
            what = f" {event.tool_name}" if event.tool_name else ""
            reason = event.reason.splitlines()[0] if event.reason else ""
            return f"  ⚑ {event.event} hook: {event.decision}{what}: {reason}"
        return None
