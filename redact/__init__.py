"""Secrets: which environment variables hold credentials, and (built on that) the one redactor
that keeps them out of the store, exports, logs, errors and output. Standard library only, so
every other package may import it."""

from __future__ import annotations

from gosling.redact.names import credential_env, is_credential_env
from gosling.redact.redactor import (
    KEY_FORMATS,
    MIN_SECRET_LENGTH,
    Redactor,
    redact,
    redact_json,
    redact_value,
)

__all__ = [
    "KEY_FORMATS",
    "MIN_SECRET_LENGTH",
    "Redactor",
    "credential_env",
    "is_credential_env",
    "redact",
    "redact_json",
    "redact_value",
]
