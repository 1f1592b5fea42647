"""JSON from files gosling did not write, with a nesting limit.

`json.loads` recurses once per level, so a file of 100,000 `[` raises `RecursionError`, and a
value a few hundred levels deep still breaks the code that walks it later (redaction, the
store). Imported JSON is refused past `MAX_DEPTH` levels with a plain `ValueError`, which the
importers already turn into a skipped line or an `ImportFailed` naming the file.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 128


class TooDeep(ValueError):
    def __init__(self) -> None:
        super().__init__(f"JSON nested more than {MAX_DEPTH} levels deep")


def load_json(text: str | bytes) -> Any:
    """`json.loads`, raising `ValueError` (never `RecursionError`) for too deep a value."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep() from None
    if isinstance(value, dict | list) and _deeper_than(value, MAX_DEPTH):
        raise TooDeep()
    return value


def _deeper_than(value: dict[str, Any] | list[Any], limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
