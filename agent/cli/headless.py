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
from dataclasses import dataclass
from typing import IO, Any, Literal

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


@dataclass(frozen=True)
class RunInfo:
    """What the result reports beside the turn itself."""

    provider: str | None = None
    model: str | None = None
    duration_ms: int = 0
    total_cost_usd: float | None = None
    """None when the model's price is unknown."""
    sandbox: str | None = None
    """Where tool processes ran: off, read-only or workspace-write."""
    hook_decisions: tuple[dict[str, Any], ...] = ()
    """Every hook that ran and what it decided (`HookDecided` events)."""


def result_payload(
    session_id: str | None, finished: TurnFinished, info: RunInfo | None = None
) -> dict[str, Any]:
    info = info or RunInfo()
    return {
        "session_id": session_id,
        "provider": info.provider,
        "model": info.model,
        "final_text": finished.final_text,
        "stop_reason": finished.stop_reason,
        "is_error": finished.stop_reason in ERROR_STOP_REASONS,
        "turns": finished.turns,
        "num_turns": finished.turns,
        "duration_ms": info.duration_ms,
        "usage": finished.usage.model_dump(mode="json"),
        "total_cost_usd": info.total_cost_usd,
        "permission_denied": finished.permission_denied,
        "error": finished.error,
        "sandbox": info.sandbox,
        "hook_decisions": list(info.hook_decisions),
    }


class HeadlessRenderer:
    def __init__(
        self,
        output_format: OutputFormat,
        *,
        stdout: IO[str] | None = None,
        stderr: IO[str] | None = None,
        quiet: bool = False,
    ) -> None:
        self.format = output_format
        self.out = stdout or sys.stdout
        self.err = stderr or sys.stderr
        self.quiet = quiet
        self._pending_text = ""
        self.hook_decisions: list[dict[str, Any]] = []
        """What every hook decided, for the result (`RunInfo.hook_decisions`)."""

    def start(self, info: dict[str, Any]) -> None:
        if self.format == "stream-json":
            self._emit({"v": 1, "type": "init", **info})

    def event(self, event: Event) -> None:
        if isinstance(event, HookDecided):
            decision = event.to_json()
            for key in ("v", "type"):
                decision.pop(key)
            self.hook_decisions.append(decision)
        if self.format == "stream-json":
            if not isinstance(event, TurnFinished):
                self._emit(event.to_json())
            return
        if self.format == "text" and not self.quiet:
            self._progress(event)
        elif isinstance(event, HookFailed):
            self.note(f"warning: {event.text}")

    def finish(
        self, session_id: str | None, finished: TurnFinished, info: RunInfo | None = None
    ) -> None:
        payload = result_payload(session_id, finished, info)
        if self.format == "stream-json":
            self._emit({"v": 1, "type": "result", **payload})
        elif self.format == "json":
            self.out.write(redact_json(json.dumps(payload)) + "\n")
        else:
            if finished.error and not self.quiet:
                self.note(f"error: {finished.error}")
            if finished.final_text:
                self.out.write(redact(finished.final_text.rstrip("\n")) + "\n")
        self.out.flush()

    def note(self, line: str) -> None:
        """One line of progress or diagnostics on stderr."""
        self.err.write(redact(line.rstrip("\n")) + "\n")
        self.err.flush()

    def _emit(self, payload: dict[str, Any]) -> None:
        self.out.write(redact_json(json.dumps(payload, default=str)) + "\n")
        self.out.flush()

    def _progress(self, event: Event) -> None:
        err = _Redacted(self.err)
        if isinstance(event, TextDelta):
            self._pending_text += event.text
            return
        if isinstance(event, MessageAdded) and event.message.role == "assistant":
            # Narration before tool calls is progress; the last reply is the answer (stdout).
            if event.message.tool_requests and self._pending_text.strip():
                err.write(self._pending_text.rstrip() + "\n")
            self._pending_text = ""
        elif isinstance(event, ToolCall):
            args = json.dumps(event.arguments)
            err.write(f"● {event.name} {args[:200]}{'…' if len(args) > 200 else ''}\n")
        elif isinstance(event, ToolResult):
            lines = event.output.count("\n") + 1 if event.output else 0
            mark = "✗" if event.is_error else "✓"
            err.write(f"  {mark} {event.name}: {lines} line(s)\n")
        elif isinstance(event, PermissionRequest) and event.granted is False:
            err.write(f"  ⊘ {event.name} needs approval: {event.reason}\n")
        elif isinstance(event, CompactionStarted):
            err.write(f"⋯ compacting ({event.trigger}, ~{event.tokens_before:,} tokens)\n")
        elif isinstance(event, CompactionFinished):
            err.write(f"⋯ compacted to ~{event.tokens_after:,} tokens\n")
        elif isinstance(event, HintsLoaded):
            err.write(f"⋯ loaded hints from {', '.join(event.directories)}\n")
        elif isinstance(event, Notice):
            err.write(f"note: {event.text}\n")
        elif isinstance(event, HookDecided) and event.decision in _SHOWN_HOOK_DECISIONS:
            what = f" {event.tool_name}" if event.tool_name else ""
            reason = event.reason.splitlines()[0] if event.reason else ""
            err.write(f"  ⚑ {event.event} hook: {event.decision}{what}: {reason}\n")
        err.flush()


class _Redacted:
    """Writes to a stream through the redactor."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def write(self, text: str) -> None:
        self.stream.write(redact(text))

    def flush(self) -> None:
        self.stream.flush()
