"""What a hook's exit code and output mean, in Claude Code's terms.

- exit 0: stdout is the answer. JSON (an object) may say `continue: false` (stop the turn,
  `stopReason`), `systemMessage` (shown to the user), `decision: "block"` with `reason`,
  and `hookSpecificOutput` with `permissionDecision` (`allow`, `deny`, `ask`),
  `permissionDecisionReason`, `additionalContext` and (PreToolUse) `updatedInput`, the
  tool input to run instead, in the shape the hook was sent. Plain text is context for
  UserPromptSubmit and SessionStart, and instructions to the summarizer for PreCompact.
- exit 2: block; stderr is the reason (the model sees it where the event has a model to
  tell: PreToolUse, PostToolUse, Stop).
- any other exit, a timeout, or a hook that cannot start: a failure, reported to the user,
  and the session goes on as if the hook were not there.

Pure: the process is run elsewhere (`process.run_hook`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from gosling.agent.hooks.config import HookEvent
from gosling.agent.hooks.process import HookRun, cap

Decision = Literal["none", "allow", "deny", "ask", "block", "context", "stop", "error"]
PLAIN_TEXT_IS_CONTEXT: frozenset[HookEvent] = frozenset(
    {"UserPromptSubmit", "SessionStart", "PreCompact"}
)
MAX_JSON_DEPTH = 32


@dataclass(frozen=True)
class HookAnswer:
    """One hook's answer."""

    decision: Decision
    reason: str = ""
    """Why it blocked, denied or asked (what the model or the user is told)."""
    context: str = ""
    """Text to add: model context, or instructions to the summarizer (PreCompact)."""
    system_message: str = ""
    stop_reason: str | None = None
    """Set when the hook said `continue: false`."""
    error: str = ""
    """Why the hook failed (exit code, timeout, bad output)."""
    updated_input: dict[str, Any] | None = None
    """PreToolUse's `updatedInput`: the `tool_input` to run instead of the model's."""


def interpret(event: HookEvent, run: HookRun) -> HookAnswer:
    """The answer of `run` to `event` (see the module docstring)."""
    if run.failed_to_start is not None:
        return HookAnswer("error", error=f"could not start: {run.failed_to_start}")
    if run.timed_out:
        return HookAnswer("error", error="timed out; it was killed")
    if run.exit_code == 2:
        reason = cap(run.stderr.strip()) or "blocked by a hook (exit 2, no message)"
        return HookAnswer("block", reason=reason)
    if run.exit_code != 0:
        detail = _first_line(run.stderr) or _first_line(run.stdout)
        return HookAnswer(
            "error", error=f"exit {run.exit_code}" + (f": {detail}" if detail else "")
        )
    text = run.stdout.strip()
    if text.startswith("{"):
        data = _json_object(text)
        if data is not None:
            return _from_json(event, data)
    if text and event in PLAIN_TEXT_IS_CONTEXT:
        return HookAnswer("context", context=cap(text))
    return HookAnswer("none")


def _from_json(event: HookEvent, data: dict[str, Any]) -> HookAnswer:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    context = _text(specific.get("additionalContext"))
    if event == "PreCompact":
        context = "\n".join(t for t in (context, _text(specific.get("customInstructions"))) if t)
    system_message = _text(data.get("systemMessage"))
    stop_reason = None
    if data.get("continue") is False:
        stop_reason = _text(data.get("stopReason")) or f"a {event} hook stopped the turn"
    decision: Decision = "context" if context else "none"
    reason = ""
    permission = specific.get("permissionDecision")
    legacy = data.get("decision")
    if event == "PreToolUse" and permission in ("allow", "deny", "ask"):
        decision = permission
        reason = _text(specific.get("permissionDecisionReason")) or _text(data.get("reason"))
    elif event == "PreToolUse" and legacy in ("approve", "block"):
        decision = "allow" if legacy == "approve" else "deny"
        reason = _text(data.get("reason"))
    elif legacy == "block":
        decision = "block"
        reason = _text(data.get("reason")) or f"blocked by a {event} hook"
    updated = specific.get("updatedInput") if event == "PreToolUse" else None
    if stop_reason is not None:
        decision = "stop"
    return HookAnswer(
        decision,
        cap(reason),
        cap(context),
        cap(system_message),
        stop_reason=stop_reason,
        updated_input=updated if isinstance(updated, dict) else None,
    )


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(data, dict) or _depth(data) > MAX_JSON_DEPTH:
        return None
    return data


def _depth(value: Any, level: int = 0) -> int:
    if level > MAX_JSON_DEPTH:
        return level
    if isinstance(value, dict):
        return max((_depth(v, level + 1) for v in value.values()), default=level + 1)
    if isinstance(value, list):
        return max((_depth(v, level + 1) for v in value), default=level + 1)
    return level


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _first_line(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= 300 else line[:300] + "…"
