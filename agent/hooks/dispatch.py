"""`SessionHooks`: fire one event's hooks for one session and combine their answers.

Every matching command of an event runs at once (identical commands once), as in Claude
Code. Their answers add up: any block blocks, `deny` beats `ask` beats `allow`, contexts
are joined. Every run becomes a `HookDecided` event (what `--json` reports); a hook that
fails or times out is also reported once per session as a notice, and never stops it.
Nothing is spawned, serialised or written for an event without hooks.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gosling.agent.events import HookDecided, HookFailed, Notice
from gosling.agent.hooks.answers import HookAnswer, interpret
from gosling.agent.hooks.config import ConfiguredHook, HookConfig, HookEvent
from gosling.agent.hooks.outcome import NO_OUTCOME, HookOutcome, Permission
from gosling.agent.hooks.process import run_hook
from gosling.agent.hooks.tools import matches
from gosling.agent.hooks.transcript import TranscriptFile

if TYPE_CHECKING:
    from gosling.agent.session import AgentSession

CLAUDE_CODE_MODES = {
    "auto": "bypassPermissions",
    "approve": "default",
    "smart_approve": "default",
    "chat": "plan",
}
_STRICTNESS: dict[Permission, int] = {"allow": 0, "ask": 1, "deny": 2}


class SessionHooks:
    """The hooks of one session (state: which failures were already reported, the
    transcript file, whether a Stop hook is keeping the turn going)."""

    def __init__(
        self,
        config: HookConfig,
        *,
        working_dir: Path,
        project_dir: Path,
        mode: Callable[[], str],
        transcripts: Path | None,
    ) -> None:
        self.config = config
        self.working_dir = working_dir
        self.project_dir = project_dir
        self.mode = mode
        self.transcripts = transcripts
        self.reported: set[tuple[str, str]] = set()
        self.started = False
        self.start_source: str | None = None
        """SessionStart's `source` when it is not startup or resume (`clear`)."""
        self.stop_hook_active = False
        self.stop_blocks = 0
        """Times Stop hooks kept the current turn going."""
        self._transcript: TranscriptFile | None = None
        self._fallback_id = str(uuid.uuid4())

    def wants(self, event: HookEvent) -> bool:
        return event in self.config.events

    async def fire(
        self,
        session: AgentSession,
        event: HookEvent,
        fields: Mapping[str, Any],
        match: tuple[str, ...] = (),
        *,
        tool_use_id: str | None = None,
    ) -> HookOutcome:
        """Run `event`'s hooks whose matcher matches one of `match` (tool names, trigger,
        source; UserPromptSubmit and Stop have none) with the common fields plus `fields`."""
        chosen = self._matching(event, match)
        if not chosen:
            return NO_OUTCOME
        payload = json.dumps(
            {**self._common(session, event), **fields}, default=str, ensure_ascii=False
        ).encode()
        runs = await asyncio.gather(
            *(
                run_hook(
                    hook.command,
                    payload,
                    cwd=self.working_dir,
                    project_dir=self.project_dir,
                    timeout=hook.timeout,
                )
                for hook in chosen
            )
        )
        outcome = HookOutcome()
        tool_name = fields.get("gosling_tool_name") if event.endswith("ToolUse") else None
        for hook, run in zip(chosen, runs, strict=True):
            answer = interpret(event, run)
            self._add(outcome, event, hook, answer)
            outcome.events.append(
                HookDecided(
                    event=event,
                    command=hook.command,
                    source=hook.source,
                    decision=answer.decision,
                    reason=answer.reason or answer.error or answer.stop_reason or "",
                    tool_name=tool_name if isinstance(tool_name, str) else None,
                    tool_use_id=tool_use_id,
                    exit_code=run.exit_code,
                    duration_ms=run.duration_ms,
                )
            )
        return outcome

    def _matching(self, event: HookEvent, match: tuple[str, ...]) -> list[ConfiguredHook]:
        seen: set[str] = set()
        chosen = []
        for hook in self.config.for_event(event):
            if match and not matches(hook.matcher, match):
                continue
            if hook.command not in seen:
                seen.add(hook.command)
                chosen.append(hook)
        return chosen

    def _add(
        self, outcome: HookOutcome, event: HookEvent, hook: ConfiguredHook, answer: HookAnswer
    ) -> None:
        if answer.decision == "error":
            key = (event, hook.command)
            if key not in self.reported:
                self.reported.add(key)
                outcome.events.append(
                    HookFailed(
                        f"{event} hook `{_short(hook.command)}` failed ({answer.error}); "
                        f"gosling goes on without it (configured in {hook.source}; later "
                        "failures of this hook are not shown)"
                    )
                )
            return
        if answer.system_message:
            outcome.events.append(Notice(f"{event} hook: {answer.system_message}"))
        if answer.context:
            outcome.context = "\n\n".join(t for t in (outcome.context, answer.context) if t)
        if answer.updated_input is not None and outcome.updated_input is None:
            outcome.updated_input = answer.updated_input
        if answer.stop_reason is not None and outcome.stop_reason is None:
            outcome.stop_reason = answer.stop_reason
        if answer.decision == "block":
            outcome.blocked = True
            outcome.reason = "\n".join(t for t in (outcome.reason, answer.reason) if t)
        elif answer.decision in ("allow", "ask", "deny"):
            permission: Permission = answer.decision
            current = outcome.permission
            if current is None or _STRICTNESS[permission] > _STRICTNESS[current]:
                outcome.permission = permission
                outcome.permission_reason = answer.reason

    def _common(self, session: AgentSession, event: HookEvent) -> dict[str, Any]:
        mode = self.mode()
        return {
            "session_id": session.id or self._fallback_id,
            "transcript_path": self._transcript_path(session),
            "cwd": str(self.working_dir),
            "permission_mode": CLAUDE_CODE_MODES.get(mode, "default"),
            "gosling_permission_mode": mode,
            "hook_event_name": event,
        }

    def _transcript_path(self, session: AgentSession) -> str:
        if self.transcripts is None:
            return ""
        if self._transcript is None:
            name = f"{session.id or self._fallback_id}.jsonl"
            self._transcript = TranscriptFile(self.transcripts / name)
        return self._transcript.sync(session, self.working_dir)


def _short(command: str, width: int = 60) -> str:
    line = " ".join(command.split())
    return line if len(line) <= width else line[: width - 1] + "…"
