"""A check of Claude Code's documented result fields (`claude -p --output-format json` and
the last line of `stream-json`), which gosling's result object must carry with the same
names, types and meanings."""

from __future__ import annotations

from typing import Any

SUBTYPES = ("success", "error_max_turns", "error_during_execution")
USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def check_claude_code_result(payload: Any) -> list[str]:
    """What is wrong with `payload` as Claude Code's result object (empty: nothing)."""
    problems: list[str] = []

    def expect(field: str, kinds: tuple[type, ...]) -> None:
        value = payload.get(field, KeyError)
        if value is KeyError:
            problems.append(f"no {field}")
        elif not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            problems.append(f"{field} is {type(value).__name__}")

    if not isinstance(payload, dict):
        return [f"not an object: {payload!r}"]
    if payload.get("type") != "result":
        problems.append(f"type is {payload.get('type')!r}, not 'result'")
    if payload.get("subtype") not in SUBTYPES:
        problems.append(f"subtype {payload.get('subtype')!r} is not one of {SUBTYPES}")
    expect("is_error", (bool,))
    expect("result", (str,))
    expect("session_id", (str, type(None)))
    expect("num_turns", (int,))
    expect("duration_ms", (int,))
    expect("duration_api_ms", (int,))
    expect("total_cost_usd", (float, int, type(None)))
    expect("usage", (dict,))
    expect("permission_denials", (list,))
    for field in USAGE_FIELDS:
        value = payload.get("usage", {}).get(field)
        if not isinstance(value, int) or isinstance(value, bool):
            problems.append(f"usage.{field} is {value!r}, not a count")
    for denial in payload.get("permission_denials") or []:
        if set(denial) != {"tool_name", "tool_use_id", "tool_input"}:
            problems.append(f"permission denial {denial!r} is not Claude Code's shape")
    if payload.get("is_error") != (payload.get("subtype") != "success"):
        problems.append("is_error does not follow subtype")
    if payload.get("duration_api_ms", 0) > payload.get("duration_ms", 0):
        problems.append("duration_api_ms is longer than the whole run")
    return problems
