"""What a project config file the user has not trusted may set.

An untrusted `.gosling/config.toml` may set only what cannot run code, move data or loosen
safety, and it may tighten safety:

- context and hint settings (`SAFE_KEYS`, `models.<name>.context_limit`); hint file names
  only as hint-file names (`.goosehints` or a Markdown name; no path, no other dotfile, no
  `config.toml`, `.env` or `secrets.md`), so they cannot pull the checkout's secrets or
  files outside the project tree into the prompt;
- a permission `mode` at least as strict as the one that applies without it;
- `ask` and `deny` permission rules (added to the user's; `allow` rules are ignored);
- `developer_extension = false` (fewer tools), a stricter `sandbox`, `sandbox_network = false`.

Everything else (provider, model, base URL, keys, extensions, allow rules, a looser mode,
limits that cost money, and any setting added later) is ignored and reported. A value equal
to the one that applies anyway is harmless and kept silently.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

SAFE_KEYS = frozenset(
    {
        "auto_compact_threshold",
        "context_strategy",
        "context_limit",
        "mask_keep_last",
        "mask_keep_tokens",
        "trim_patience",
        "tool_call_cutoff",
        "tool_pair_summarization",
    }
)
MODE_STRICTNESS = {"auto": 0, "smart_approve": 1, "approve": 2, "chat": 3}
TIGHTENING_RULES = ("ask", "deny")


@dataclass
class FilteredProject:
    """The part of an untrusted project file that applies, and the keys that do not."""

    values: dict[str, Any] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    """Dotted keys: `base_url`, `permissions.allow`, `models."m".max_output_tokens`, ..."""


def filter_untrusted(data: Mapping[str, Any], base: Mapping[str, Any]) -> FilteredProject:
    """Split an untrusted project layer. `base` holds the values that apply without it
    (user config over defaults), for the comparisons and merges."""
    kept = FilteredProject()
    for key, value in data.items():
        if key in SAFE_KEYS or value == base.get(key):
            kept.values[key] = value
        elif key == "context_file_names":
            _hint_names(value, kept)
        elif key == "mode":
            _mode(value, base.get("mode"), kept)
        elif key == "permissions":
            _permissions(value, base.get("permissions"), kept)
        elif key == "models":
            _models(value, base.get("models"), kept)
        elif key == "sandbox":
            _sandbox(value, base.get("sandbox"), kept)
        elif key in ("developer_extension", "sandbox_network") and value is False:
            kept.values[key] = False
        else:
            kept.ignored.append(key)
    return kept


def value_at(data: Mapping[str, Any], key: str) -> Any:
    """The value of a dotted key (`permissions.allow`) in a config table, or None."""
    value: Any = data
    for part in key.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def describe_values(data: Mapping[str, Any], keys: Iterable[str] | None = None) -> list[str]:
    """`key = value` lines (values as JSON, cut at 160 characters) for the dotted `keys` of
    a config table, or for all its top-level keys."""
    lines = []
    for key in keys if keys is not None else data:
        shown = json.dumps(value_at(data, key), default=str)
        lines.append(f"{key} = {shown if len(shown) <= 160 else shown[:159] + '…'}")
    return lines


def _hint_names(value: Any, kept: FilteredProject) -> None:
    """Hint-file names only (`hints.names.untrusted_name_problem`): never a path, a dotfile
    other than `.goosehints`, a config or secrets file; one bad name ignores the list."""
    from gosling.hints.names import untrusted_name_problem

    if isinstance(value, list) and not any(untrusted_name_problem(n) for n in value):
        kept.values["context_file_names"] = value
    else:
        kept.ignored.append("context_file_names")


def _mode(value: Any, base: Any, kept: FilteredProject) -> None:
    current = MODE_STRICTNESS.get(str(base), 0)
    if MODE_STRICTNESS.get(str(value), -1) >= current:
        kept.values["mode"] = value
    else:
        kept.ignored.append("mode")


def _sandbox(value: Any, base: Any, kept: FilteredProject) -> None:
    from gosling.agent.sandbox.policy import STRICTNESS

    if STRICTNESS.get(str(value), -1) >= STRICTNESS.get(str(base), 0):
        kept.values["sandbox"] = value
    else:
        kept.ignored.append("sandbox")


def _permissions(value: Any, base: Any, kept: FilteredProject) -> None:
    if not isinstance(value, Mapping):
        kept.ignored.append("permissions")
        return
    merged = {k: list(v) for k, v in _as_mapping(base).items() if isinstance(v, list)}
    for name, rules in value.items():
        if name in TIGHTENING_RULES and isinstance(rules, list):
            merged[name] = [*merged.get(name, []), *rules]
        elif rules:
            kept.ignored.append(f"permissions.{name}")
    kept.values["permissions"] = merged


def _models(value: Any, base: Any, kept: FilteredProject) -> None:
    if not isinstance(value, Mapping):
        kept.ignored.append("models")
        return
    merged = {k: dict(v) for k, v in _as_mapping(base).items() if isinstance(v, Mapping)}
    for model, limits in value.items():
        if not isinstance(limits, Mapping):
            kept.ignored.append(f"models.{model}")
            continue
        for name, limit in limits.items():
            if name == "context_limit":
                merged.setdefault(str(model), {})[name] = limit
            else:
                kept.ignored.append(f"models.{model}.{name}")
    kept.values["models"] = merged


def _as_mapping(value: Any) -> Mapping[str, Any]:
    if isinstance(value, Mapping):
        return value
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else {}
