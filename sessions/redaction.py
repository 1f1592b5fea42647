"""Keep credentials out of the store.

Two guards, both applied on every write:

- Values of credential-like environment variables (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`,
  `GITHUB_TOKEN`, anything ending in `_API_KEY`, `_TOKEN`, `_SECRET`, `_PASSWORD`) that show up
  in message content, extension data or names are replaced with `[REDACTED:<VAR>]`. A tool that
  prints the environment cannot leak a key into the session file.
- Extension data whose keys are named like a credential (`api_key`, `authorization`,
  `password`, ...) is refused with `SecretRefused`: extensions must not park secrets there.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

from sessions.errors import SecretRefused

_SECRET_VAR = re.compile(r"(?:^|_)(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.IGNORECASE)
_SECRET_KEY = re.compile(
    r"api[_-]?key|authorization|password|passwd|secret|bearer|cookie"
    r"|(?:access|auth|refresh|session|id)[_-]?token",
    re.IGNORECASE,
)
_MIN_SECRET_LENGTH = 8


def _secret_values() -> Iterator[tuple[str, str]]:
    for name, value in os.environ.items():
        if len(value) >= _MIN_SECRET_LENGTH and _SECRET_VAR.search(name):
            yield name, value


def redact_json(text: str) -> str:
    """`text` (serialized JSON) with credential values from the environment replaced."""
    changed = False
    for name, value in _secret_values():
        for form in {value, json.dumps(value)[1:-1]}:
            if form in text:
                text = text.replace(form, f"[REDACTED:{name}]")
                changed = True
    if changed:
        json.loads(text)  # a replacement must never break the document
    return text


def redact_text(text: str) -> str:
    for name, value in _secret_values():
        if value in text:
            text = text.replace(value, f"[REDACTED:{name}]")
    return text


def refuse_secret_keys(value: Any, path: str) -> None:
    """Raise `SecretRefused` when a dict key anywhere in `value` is named like a credential."""
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}"
            if _SECRET_KEY.search(str(key)):
                raise SecretRefused(
                    f"extension data key {where!r} looks like a credential; gosling never "
                    "stores credentials in sessions. Read it from the environment instead."
                )
            refuse_secret_keys(item, where)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            refuse_secret_keys(item, f"{path}[{index}]")
