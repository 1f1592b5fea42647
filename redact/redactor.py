"""The one redactor: credential values and well-known key formats, replaced in one regex pass.

Two kinds of secret are found:

- the values (at least `MIN_SECRET_LENGTH` characters) of the credential-like environment
  variables (`redact.names.is_credential_env`), plain and JSON-escaped, and the password of
  a URL-valued one, each replaced by `[REDACTED:<VAR>]`;
- well-known key formats wherever they appear, whoever printed them: Anthropic, OpenAI, AWS
  access key ids and the secret key written next to one, GitHub, Slack tokens and webhooks,
  Stripe, bearer tokens, PEM private-key blocks and the password of a URL with userinfo,
  each replaced by `[REDACTED:<kind>]`.

Speed: text with no secret in it costs a handful of substring tests (each format has literal
triggers; the environment's values are plain strings), no regex at all. Only the formats whose
triggers occur run, each its own compiled regex with a literal prefix (one alternation of all
of them was measured 10-30x slower: `re` tries every branch at every position). The
environment's values are re-read only when `os.environ` changes, which a cheap comparison
with a snapshot detects. Figures: `python -m bench.bench_redact`.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, partial
from typing import Any
from urllib.parse import unquote, urlsplit

from gosling.redact.names import is_credential_env

MIN_SECRET_LENGTH = 8
"""Shorter values are not redacted: they would match ordinary words."""


@dataclass(frozen=True)
class KeyFormat:
    """A secret recognised by its shape. `triggers` are literal strings of which one occurs
    in any match (a fast substring test decides whether the regex needs to run at all);
    `secret_group` names the part that is replaced when the pattern also matches a label
    around it (`aws_secret_access_key = ...`)."""

    kind: str
    pattern: str
    triggers: tuple[str, ...]
    secret_group: str | None = None


_URL_SAFE = r"[^/@\s\"'<>\\]"
_CASES = ("secret", "SECRET", "Secret")
KEY_FORMATS: tuple[KeyFormat, ...] = (
    KeyFormat(
        "private-key",
        r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
        r"[\s\S]*?-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----",
        ("PRIVATE KEY",),
    ),
    KeyFormat("anthropic-key", r"sk-ant-(?<![A-Za-z0-9_]sk-ant-)[A-Za-z0-9_-]{16,}", ("sk-ant-",)),
    KeyFormat(
        "openai-key",
        r"sk-(?<![A-Za-z0-9_]sk-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
        ("sk-",),
    ),
    KeyFormat(
        "stripe-key", r"(?<![A-Za-z0-9])[sr]k_(?:live|test)_[A-Za-z0-9]{10,}", ("_live_", "_test_")
    ),
    KeyFormat(
        "github-token",
        r"gh[pousr]_(?<![A-Za-z0-9]gh._)[A-Za-z0-9]{30,}",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    KeyFormat(
        "github-token", r"github_pat_(?<![A-Za-z0-9]github_pat_)[A-Za-z0-9_]{22,}", ("github_pat_",)
    ),
    KeyFormat("slack-token", r"xox[abpors]-(?<![A-Za-z0-9].....)[A-Za-z0-9-]{10,}", ("xox",)),
    KeyFormat(
        "slack-webhook",
        r"https?://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]+",
        ("hooks.slack.com",),
    ),
    KeyFormat(
        "aws-secret-key",
        r"(?i:aws[_. -]?secret(?:[_. -]?access)?[_. -]?key|secret[_. -]?access[_. -]?key)"
        r"[\"']?\s*[=:]\s*[\"']?(?P<aws_secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        _CASES,
        "aws_secret",
    ),
    KeyFormat(
        # An access key id followed closely by a 40-character secret (CSV, `env`, configs).
        "aws-secret-key",
        r"A[KS]IA(?<![A-Z0-9]A[KS]IA)[A-Z0-9]{16}(?![A-Z0-9])[\s\S]{1,120}?(?<![A-Za-z0-9/+])"
        r"(?P<aws_pair>(?=[A-Za-z0-9/+]*[A-Z])(?=[A-Za-z0-9/+]*[a-z])[A-Za-z0-9/+]{40})"
        r"(?![A-Za-z0-9/+])",
        ("AKIA", "ASIA"),
        "aws_pair",
    ),
    KeyFormat(
        "aws-access-key-id",
        r"A[KS]IA(?<![A-Z0-9]A[KS]IA)[A-Z0-9]{16}(?![A-Z0-9])",
        ("AKIA", "ASIA"),
    ),
    KeyFormat(
        "bearer-token",
        r"(?i:bearer)\s+(?P<bearer>[A-Za-z0-9._~+/-]{16,}=*)",
        ("earer", "EARER"),
        "bearer",
    ),
    KeyFormat(
        "url-password",
        rf"://[^/@\s\"'<>\\:]*:(?P<url_password>{_URL_SAFE}+)@",
        ("://",),
        "url_password",
    ),
)


@cache
def _compiled(index: int) -> re.Pattern[str]:
    return re.compile(KEY_FORMATS[index].pattern)


def _formats_by_trigger() -> dict[str, tuple[int, ...]]:
    found: dict[str, tuple[int, ...]] = {}
    for index, key_format in enumerate(KEY_FORMATS):
        for trigger in key_format.triggers:
            found[trigger] = (*found.get(trigger, ()), index)
    return found


_TRIGGERS = _formats_by_trigger()


def _marker(name: str) -> str:
    return f"[REDACTED:{name}]"


def _env_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """Every form in which a credential value of `environ` may appear -> the variable name."""
    found: dict[str, str] = {}
    for name, value in environ.items():
        if not is_credential_env(name, value):
            continue
        forms = {value, json.dumps(value)[1:-1]}
        if "://" in value:
            password = urlsplit(value.strip()).password or ""
            forms |= {password, unquote(password)}
        for form in forms:
            if len(form) >= MIN_SECRET_LENGTH and form.strip():
                found.setdefault(form, name)
    return found


class Redactor:
    """Replaces secrets in text. One instance per environment; `redact` (module level)
    uses the process's own, refreshed whenever `os.environ` changes."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = environ
        self._lock = threading.Lock()
        self._snapshot: object = None
        self._by_value: dict[str, str] = {}

    def _fingerprint(self) -> object:
        if self._environ is not None:
            return self._environ
        data = getattr(os.environ, "_data", None)
        return data if isinstance(data, dict) else dict(os.environ)

    def _refresh(self) -> None:
        """Re-read the environment's credentials when it changed since the last call."""
        current = self._fingerprint()
        if self._snapshot is not None and current == self._snapshot:
            return
        with self._lock:
            environ = os.environ if self._environ is None else self._environ
            found = _env_secrets(environ)
            self._by_value = {v: found[v] for v in sorted(found, key=len, reverse=True)}
            self._snapshot = dict(current) if isinstance(current, dict) else current

    def _replace(self, key_format: KeyFormat, match: re.Match[str]) -> str:
        if key_format.secret_group is None:
            return _marker(key_format.kind)
        start, end = match.span(key_format.secret_group)
        offset = match.start()
        text = match.group()
        before, after = text[: start - offset], text[end - offset :]
        return self.redact(before) + _marker(key_format.kind) + after

    def redact(self, text: str) -> str:
        """`text` with every secret replaced by `[REDACTED:<name or kind>]`."""
        if not text:
            return text
        self._refresh()
        for value, name in self._by_value.items():  # longest first
            if value in text:
                text = text.replace(value, _marker(name))
        hits = [trigger for trigger in _TRIGGERS if trigger in text]
        if not hits:
            return text
        for index in sorted({index for trigger in hits for index in _TRIGGERS[trigger]}):
            key_format = KEY_FORMATS[index]
            text = _compiled(index).sub(partial(self._replace, key_format), text)
        return text

    def redact_json(self, text: str) -> str:
        """Serialized JSON with secrets replaced; the result is always valid JSON."""
        redacted = self.redact(text)
        if redacted == text:
            return text
        try:
            json.loads(redacted)
        except ValueError:
            return json.dumps(self.redact_value(json.loads(text)))
        return redacted

    def redact_value(self, value: Any) -> Any:
        """A JSON-like value with every string (keys included) and number redacted."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {self.redact(str(k)): self.redact_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact_value(item) for item in value]
        if isinstance(value, int | float) and not isinstance(value, bool):
            # A numeric credential (a PIN, an account number) is as secret as a string one.
            redacted = self.redact(str(value))
            return value if redacted == str(value) else redacted
        return value


_default: Redactor | None = None


def _process_redactor() -> Redactor:
    global _default
    if _default is None:
        _default = Redactor()
    return _default


def redact(text: str) -> str:
    """`text` with secrets of this process's environment and known key formats replaced."""
    return _process_redactor().redact(text)


def redact_json(text: str) -> str:
    """Like `redact`, for serialized JSON; the result stays valid JSON."""
    return _process_redactor().redact_json(text)


def redact_value(value: Any) -> Any:
    """Like `redact`, for every string inside a JSON-like value."""
    return _process_redactor().redact_value(value)
