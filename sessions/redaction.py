"""Keep credentials out of the store.

Two guards, both applied on every write:

- Secrets in message content, extension data or names (values of credential-like
  environment variables, well-known key formats) are replaced by the one redactor,
  `redact` (`[REDACTED:<VAR>]`, `[REDACTED:<kind>]`). A tool that prints the environment
  cannot leak a key into the session file.
- Extension data whose keys are named like a credential (`api_key`, `authorization`,
  `password`, ...) is refused with `SecretRefused`: extensions must not park secrets there.
"""

from __future__ import annotations

import re
from typing import Any

from gosling.redact import redact as redact_text
from gosling.redact import redact_json
from gosling.sessions.errors import SecretRefused

__all__ = ["redact_json", "redact_text", "refuse_secret_keys"]

_SECRET_KEY = re.compile(
    r"api[_-]?key|authorization|password|passwd|secret|bearer|cookie"
    r"|(?:access|auth|refresh|session|id)[_-]?token",
    re.IGNORECASE,
)


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
