"""Which hint file names to look for, in order.

The agent passes the configured list explicitly; callers that pass nothing get the
`GOSLING_CONTEXT_FILE_NAMES` environment variable (a JSON array or a comma-separated list),
else the defaults.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

DEFAULT_FILENAMES: tuple[str, ...] = (".goosehints", "AGENTS.md")
"""goose's default and order: in one directory `.goosehints` comes before `AGENTS.md`."""
ENV_VAR = "GOSLING_CONTEXT_FILE_NAMES"

_EXAMPLE = "e.g. '[\"AGENTS.md\", \".goosehints\"]' or 'AGENTS.md,.goosehints'"


def resolve_filenames(filenames: Sequence[str] | None = None) -> tuple[str, ...]:
    """The hint file names to use: `filenames` if given, else the env variable, else defaults.

    Raises `ValueError` with the fix when a name is not a plain file name.
    """
    if filenames is None:
        raw = os.environ.get(ENV_VAR, "").strip()
        filenames = _parse_env(raw) if raw else DEFAULT_FILENAMES
    elif isinstance(filenames, str):
        raise ValueError(f"hint file names must be a list of names, not the string {filenames!r}")
    names = tuple(dict.fromkeys(filenames))
    for name in names:
        _check_name(name)
    return names


def _parse_env(raw: str) -> list[str]:
    if raw.startswith("["):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{ENV_VAR} is not valid JSON ({exc.msg}); {_EXAMPLE}") from exc
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{ENV_VAR} must be a list of file names; {_EXAMPLE}")
        return [v.strip() for v in value if v.strip()]
    return [part.strip() for part in raw.split(",") if part.strip()]


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"hint file name {name!r} is empty or not a string; {_EXAMPLE}")
    if "/" in name or "\\" in name or name in (".", "..") or "\0" in name:
        raise ValueError(
            f"hint file name {name!r} must be a plain file name without directories; {_EXAMPLE}"
        )
