"""`HookOutcome`: what every hook of one event said, combined (see `dispatch`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from gosling.agent.events import Event

Permission = Literal["allow", "deny", "ask"]
PRE_TOOL_BLOCKED = "A PreToolUse hook blocked this call: {reason}"
PRE_TOOL_DENIED = "Permission denied by a PreToolUse hook: {reason}"


@dataclass
class HookOutcome:
    """The combined answer of every hook one event ran."""

    blocked: bool = False
    reason: str = ""
    permission: Permission | None = None
    permission_reason: str = ""
    context: str = ""
    stop_reason: str | None = None
    updated_input: dict[str, Any] | None = None
    """A PreToolUse hook's `updatedInput` (the first hook in config order that gave one)."""
    events: list[Event] = field(default_factory=list)
    """`HookDecided` per run, notices for failures and system messages: yield them."""


NO_OUTCOME = HookOutcome()


def pre_tool_refusal(outcome: HookOutcome) -> str | None:
    """Why a call is refused before permissions are even asked, if a hook said so."""
    if outcome.blocked:
        return PRE_TOOL_BLOCKED.format(reason=outcome.reason)
    if outcome.permission == "deny":
        return PRE_TOOL_DENIED.format(reason=outcome.permission_reason or "no reason given")
    return None
