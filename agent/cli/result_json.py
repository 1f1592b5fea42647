"""The result object of `gosling run --output-format json` (and the last line of
`stream-json`), in Claude Code's shape so scripts written for `claude -p` read it unchanged.

Claude Code's fields keep its names and meanings: `type` ("result"), `subtype` (`success`,
`error_max_turns`, `error_during_execution`), `is_error`, `result` (the final answer),
`session_id`, `num_turns`, `duration_ms`, `duration_api_ms`, `total_cost_usd`, `usage`
(`input_tokens` without the cached part, `output_tokens`, `cache_creation_input_tokens`,
`cache_read_input_tokens`) and `permission_denials` (`tool_name`, `tool_use_id`,
`tool_input`). gosling's own fields use names Claude Code does not: `provider`, `model`,
`stop_reason`, `error` (the message, or null), `sandbox`, `exit_code`, `hook_decisions`.
Other features add theirs beside these, never under a Claude Code name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from gosling.providers.base import Usage

Subtype = Literal["success", "error_max_turns", "error_during_execution"]

CLAUDE_CODE_FIELDS = (
    "type",
    "subtype",
    "is_error",
    "result",
    "session_id",
    "num_turns",
    "duration_ms",
    "duration_api_ms",
    "total_cost_usd",
    "usage",
    "permission_denials",
)
"""The fields every result object carries, success or error (README: Output)."""


@dataclass(frozen=True)
class Denial:
    """One refused tool call, as Claude Code lists it in `permission_denials`."""

    tool_name: str
    tool_use_id: str
    tool_input: dict[str, Any]


@dataclass(frozen=True)
class RunOutcome:
    """Everything the result object reports about one run."""

    stop_reason: str
    """gosling's own word: end_turn, max_turns, cancelled, error, context_exceeded, config."""
    final_text: str = ""
    session_id: str | None = None
    num_turns: int = 0
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    denials: tuple[Denial, ...] = ()
    provider: str | None = None
    model: str | None = None
    duration_ms: int = 0
    duration_api_ms: int = 0
    total_cost_usd: float | None = None
    """None when the model's price is unknown."""
    sandbox: str | None = None
    exit_code: int = 0
    hook_decisions: tuple[dict[str, Any], ...] = ()
    """Every hook that ran and what it decided (`HookDecided` events)."""


def subtype_of(stop_reason: str) -> Subtype:
    if stop_reason == "max_turns":
        return "error_max_turns"
    if stop_reason in ("end_turn", "permission_denied"):
        return "success"
    return "error_during_execution"


def usage_fields(usage: Usage) -> dict[str, int]:
    """Claude Code's usage counters: `input_tokens` is the uncached part (gosling counts
    every input token in `Usage.input_tokens`), never null."""
    cached = usage.cache_read_tokens + usage.cache_write_tokens
    return {
        "input_tokens": max((usage.input_tokens or 0) - cached, 0),
        "output_tokens": usage.output_tokens or 0,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
    }


def result_object(outcome: RunOutcome) -> dict[str, Any]:
    subtype = subtype_of(outcome.stop_reason)
    payload: dict[str, Any] = {
        "type": "result",
        "subtype": subtype,
        "is_error": subtype != "success",
        "result": outcome.final_text,
        "session_id": outcome.session_id,
        "num_turns": outcome.num_turns,
        "duration_ms": outcome.duration_ms,
        "duration_api_ms": outcome.duration_api_ms,
        "total_cost_usd": outcome.total_cost_usd,
        "usage": usage_fields(outcome.usage),
        "permission_denials": [
            {"tool_name": d.tool_name, "tool_use_id": d.tool_use_id, "tool_input": d.tool_input}
            for d in outcome.denials
        ],
    }
    payload.update(
        {
            "provider": outcome.provider,
            "model": outcome.model,
            "stop_reason": outcome.stop_reason,
            "error": outcome.error,
            "sandbox": outcome.sandbox,
            "exit_code": outcome.exit_code,
            "hook_decisions": list(outcome.hook_decisions),
        }
    )
    return payload
