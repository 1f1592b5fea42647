"""What a hook is in config, in Claude Code's shape, and where each one came from.

In TOML (the user's config, or a trusted project's):

    [[hooks.PreToolUse]]
    matcher = "Bash"
    [[hooks.PreToolUse.hooks]]
    type = "command"
    command = "~/bin/no-force-push.sh"
    timeout = 10

and the same `hooks` object in JSON from a Claude Code `settings.json` named in
`hook_settings`. Events and fields gosling does not run (Claude Code's `SubagentStop`, a
`prompt` or `http` hook) are kept in the listing as skipped, so `gosling hooks` says why a
hook from a shared settings file does not fire instead of dropping it silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

HookEvent = Literal[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
    "Notification",
]
HOOK_EVENTS: tuple[HookEvent, ...] = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
    "Notification",
)
DEFAULT_TIMEOUT_SECS = 60.0
"""Claude Code's default for a command hook."""
MAX_TIMEOUT_SECS = 3600.0


class HookCommand(BaseModel):
    """One command run when its group's matcher matches."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    """Run with bash (sh without it) in the working dir; the event's JSON on stdin."""
    timeout: float | None = Field(default=None, gt=0, le=MAX_TIMEOUT_SECS)
    """Seconds before the command and everything it started are killed (default 60)."""


class HookGroup(BaseModel):
    """A matcher and the commands it runs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    matcher: str = ""
    """Tool name for PreToolUse/PostToolUse (gosling's or Claude Code's: `Bash`, `Read`,
    `Edit`, `Write`), `Edit|Write` or a regex; the trigger (`manual`, `auto`) for
    PreCompact/PostCompact; the source for SessionStart; empty or `*`: everything."""
    hooks: list[HookCommand] = Field(min_length=1)

    @field_validator("matcher")
    @classmethod
    def _regex(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"matcher {value!r} is not a valid regex: {exc}") from exc
        return value


HookTable = dict[HookEvent, list[HookGroup]]


@dataclass(frozen=True)
class ConfiguredHook:
    """One command of one event, with where it was configured."""

    event: HookEvent
    matcher: str
    command: str
    timeout: float
    source: str


@dataclass(frozen=True)
class SkippedHook:
    """Something a Claude Code settings file configures that gosling does not run."""

    event: str
    matcher: str
    what: str
    source: str
    why: str


@dataclass(frozen=True)
class HookConfig:
    """Every configured hook, in the order they were configured (user before project)."""

    hooks: tuple[ConfiguredHook, ...] = ()
    skipped: tuple[SkippedHook, ...] = ()
    problems: tuple[str, ...] = ()
    """Files named in `hook_settings` that could not be used, with why (one line each)."""

    def for_event(self, event: HookEvent) -> tuple[ConfiguredHook, ...]:
        return tuple(h for h in self.hooks if h.event == event)

    @property
    def events(self) -> frozenset[HookEvent]:
        return frozenset(h.event for h in self.hooks)


def flatten(table: Mapping[HookEvent, Iterable[HookGroup]], source: str) -> list[ConfiguredHook]:
    """The commands of a validated `hooks` table, each tagged with `source`."""
    found = []
    for event, groups in table.items():
        for group in groups:
            for hook in group.hooks:
                timeout = hook.timeout or DEFAULT_TIMEOUT_SECS
                found.append(ConfiguredHook(event, group.matcher, hook.command, timeout, source))
    return found


def validate_table(raw: Any, where: str) -> HookTable:
    """A `hooks` table from TOML, validated; `ValueError` names `where` and the fix."""
    from pydantic import TypeAdapter

    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: `hooks` must be a table of events, e.g. [[hooks.PreToolUse]]")
    unknown = [name for name in raw if name not in HOOK_EVENTS]
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], HOOK_EVENTS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; events: {', '.join(HOOK_EVENTS)}"
        raise ValueError(f"{where}: unknown hook event {unknown[0]!r}{hint}")
    try:
        table: HookTable = TypeAdapter(HookTable).validate_python(dict(raw))
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(part) for part in first["loc"])
        raise ValueError(f"{where}: hooks.{loc}: {first['msg']}") from exc
    return table


def read_claude_settings(path: Path, source: str) -> tuple[list[ConfiguredHook], list[SkippedHook]]:
    """The command hooks of a Claude Code `settings.json` (its `hooks` object); what gosling
    cannot run is returned as skipped. `ValueError` says why the file cannot be used."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from exc
    table = data.get("hooks", {}) if isinstance(data, dict) else None
    if not isinstance(table, dict):
        raise ValueError(f"{path}: `hooks` must be an object of events")
    hooks: list[ConfiguredHook] = []
    skipped: list[SkippedHook] = []
    for event, groups in table.items():
        for group in groups if isinstance(groups, list) else [groups]:
            matcher = group.get("matcher", "") if isinstance(group, dict) else ""
            matcher = matcher if isinstance(matcher, str) else ""
            if event not in HOOK_EVENTS:
                skipped.append(SkippedHook(event, matcher, "", source, "event not run by gosling"))
                continue
            commands = group.get("hooks") if isinstance(group, dict) else None
            for entry in commands if isinstance(commands, list) else []:
                hook, why = _claude_command(entry)
                if hook is None:
                    what = str(entry.get("command", "")) if isinstance(entry, dict) else ""
                    skipped.append(SkippedHook(event, matcher, what, source, why))
                    continue
                try:
                    re.compile(matcher)
                except re.error:
                    skipped.append(
                        SkippedHook(event, matcher, hook.command, source, "matcher is no regex")
                    )
                    continue
                timeout = hook.timeout or DEFAULT_TIMEOUT_SECS
                hooks.append(ConfiguredHook(event, matcher, hook.command, timeout, source))
    return hooks, skipped


def _claude_command(entry: Any) -> tuple[HookCommand | None, str]:
    if not isinstance(entry, dict):
        return None, "not an object"
    kind = entry.get("type", "command")
    if kind != "command":
        return None, f"type {kind!r} hooks are not run by gosling (only command)"
    try:
        return HookCommand(
            type="command", command=entry.get("command"), timeout=entry.get("timeout")
        ), ""
    except ValidationError as exc:
        return None, exc.errors()[0]["msg"]
