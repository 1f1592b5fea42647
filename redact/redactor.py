"""The one redactor: credential values and well-known key formats, replaced in one regex pass.

Two kinds of secret are found:

- the values (at least `MIN_SECRET_LENGTH` characters) of the credential-like environment
  variables (`redact.names.is_credential_env`), plain and JSON-escaped, and the password of
  a URL-valued or connection-string-valued one, each replaced by `[REDACTED:<VAR>]`;
- well-known key formats wherever they appear, whoever printed them: Anthropic, OpenAI, AWS
  access key ids and the secret key written next to one, GitHub, GitLab, Google API keys,
  Slack tokens and webhooks, Stripe, JWTs, bearer tokens, PEM private-key blocks, the
  password of a URL with userinfo and of a connection string (`?password=`, `;Pwd=`,
  Oracle's `user/password@`), each replaced by `[REDACTED:<kind>]`.

Every secret the redactor knows (the environment's, and each value a key format found, the
last `MAX_FOUND_SECRETS` of them) is also matched encoded (`encodings.encoded_forms`):
base64 and base64url at any alignment, hex, URL-encoding; base64 or hex wrapped over lines
(`base64 ~/.bashrc`) is matched with its line breaks taken out.

Speed: text with no secret in it costs a handful of substring tests (each format has literal
triggers; the environment's values and their encodings are plain strings), and one scan for
wrapped base64 lines when there is a newline, no other regex. Only the formats whose
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

from gosling.redact.encodings import encoded_forms, unwrapped_blocks
from gosling.redact.names import CONNECTION_PASSWORD, ORACLE_PASSWORD, is_credential_env

MIN_SECRET_LENGTH = 8
"""Shorter values are not redacted: they would match ordinary words."""
MAX_FOUND_SECRETS = 64
"""Values found by a key format whose encoded forms are remembered (the latest ones)."""
MAX_REMEMBERED_LENGTH = 4096
"""Longer found values (a PEM block) are not remembered in encoded form."""


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
    KeyFormat(
        # GitLab personal, deploy, runner, pipeline-trigger, CI-job, feed, incoming-mail,
        # agent, OAuth-app and service-account tokens.
        "gitlab-token",
        r"(?<![A-Za-z0-9_])gl(?:pat|dt|rt|ptt|cbt|ft|imt|agent|oas|soat)-[A-Za-z0-9_.-]{20,}",
        (
            "glpat-",
            "gldt-",
            "glrt-",
            "glptt-",
            "glcbt-",
            "glft-",
            "glimt-",
            "glagent-",
            "gloas-",
            "glsoat-",
        ),
    ),
    KeyFormat("google-api-key", r"AIza(?<![A-Za-z0-9_-]AIza)[A-Za-z0-9_-]{35}", ("AIza",)),
    KeyFormat(
        "jwt",
        r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        ("eyJ",),
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
    KeyFormat(
        # JDBC `?password=`, `&pwd=`, ADO.NET/ODBC `;Password=`.
        "connection-password",
        r"[?&;]\s*(?i:password|passwd|pwd)=(?P<conn_password>[^;&\s\"'<>]+)",
        ("assword=", "ASSWORD=", "asswd=", "ASSWD=", "wd=", "WD="),
        "conn_password",
    ),
    KeyFormat(
        # The first pair of a connection string: `Password=pw;Server=db`.
        "connection-password",
        r"(?<![A-Za-z0-9_.-])(?i:password|pwd)=(?P<conn_first>[^;&\s\"'<>]+);",
        ("assword=", "ASSWORD=", "wd=", "WD="),
        "conn_first",
    ),
    KeyFormat(
        "connection-password",
        r"jdbc:oracle:[a-z]+:[^/@\s:\"']+/(?P<oracle_password>[^@\s\"']+)@",
        ("jdbc:oracle:",),
        "oracle_password",
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


def _passwords(value: str) -> set[str]:
    """The secrets a URL or connection-string value carries: its password, and a user name
    long enough to be a key (a Sentry DSN's `https://KEY@host/1`)."""
    found = set()
    if "://" in value:
        try:
            parts = urlsplit(value.strip())
            password, user = parts.password or "", parts.username or ""
        except ValueError:
            password = user = ""
        found |= {password, unquote(password)}
        if len(user) >= MIN_SECRET_LENGTH:
            found |= {user, unquote(user)}
    for pattern in (CONNECTION_PASSWORD, ORACLE_PASSWORD):
        for match in pattern.finditer(value):
            found |= {match.group("password"), unquote(match.group("password"))}
    return found


def secret_forms(secret: str) -> set[str]:
    """`secret` as it may appear: plain, JSON-escaped, and encoded (`encoded_forms`)."""
    if len(secret) < MIN_SECRET_LENGTH or not secret.strip():
        return set()
    forms = {secret, json.dumps(secret)[1:-1], *encoded_forms(secret, MIN_SECRET_LENGTH)}
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


def _env_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """Every form in which a credential value of `environ` may appear -> the variable name."""
    found: dict[str, str] = {}
    for name, value in environ.items():
        if not is_credential_env(name, value):
            continue
        for secret in {value, *_passwords(value)}:
            for form in secret_forms(secret):
                found.setdefault(form, name)
    return found


def _is_wrappable(form: str) -> bool:
    """Whether `form` could be part of wrapped base64 or hex output."""
    return (
        form.isascii()
        and form.replace("+", "a").replace("/", "a").replace("-", "a").replace("_", "a").isalnum()
    )


class Redactor:
    """Replaces secrets in text. One instance per environment; `redact` (module level)
    uses the process's own, refreshed whenever `os.environ` changes."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = environ
        self._lock = threading.Lock()
        self._snapshot: object = None
        self._env_forms: dict[str, str] = {}
        self._found: dict[str, str] = {}
        """Secrets found by a key format (oldest first) -> their kind."""
        self._by_value: dict[str, str] = {}
        """Every form to replace -> its marker name, longest first (replaced, never mutated,
        so a reader in another thread iterates a complete one)."""
        self._wrappable: tuple[tuple[str, str], ...] = ()
        """The forms that may be split over lines of base64 or hex output."""

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
            self._env_forms = _env_secrets(environ)
            self._rebuild()
            self._snapshot = dict(current) if isinstance(current, dict) else current

    def _rebuild(self) -> None:
        forms = dict(self._env_forms)
        for secret, kind in self._found.items():
            for form in secret_forms(secret):
                forms.setdefault(form, kind)
        self._by_value = {v: forms[v] for v in sorted(forms, key=len, reverse=True)}
        self._wrappable = tuple((v, n) for v, n in self._by_value.items() if _is_wrappable(v))

    def _remember(self, secret: str, kind: str) -> bool:
        """Match `secret` (found by a key format) in every form from now on; False when it
        was known already or is not remembered."""
        if "[REDACTED:" in secret or secret in self._found:
            return False
        if not MIN_SECRET_LENGTH <= len(secret) <= MAX_REMEMBERED_LENGTH:
            return False
        with self._lock:
            self._found[secret] = kind
            while len(self._found) > MAX_FOUND_SECRETS:
                del self._found[next(iter(self._found))]
            self._rebuild()
        return True

    def _replace(self, key_format: KeyFormat, found: list[str], match: re.Match[str]) -> str:
        if key_format.secret_group is None:
            found.append(match.group())
            return _marker(key_format.kind)
        found.append(match.group(key_format.secret_group))
        start, end = match.span(key_format.secret_group)
        offset = match.start()
        text = match.group()
        before, after = text[: start - offset], text[end - offset :]
        return self.redact(before) + _marker(key_format.kind) + after

    def _replace_known(self, text: str, forms: dict[str, str] | None = None) -> str:
        """`text` with every known form (or only `forms`) replaced by its marker."""
        forms = self._by_value if forms is None else forms
        if forms is self._by_value:
            wrappable = self._wrappable
        else:
            wrappable = tuple((v, n) for v, n in forms.items() if _is_wrappable(v))
        if wrappable and "\n" in text:
            # First, while the wrapped blocks are whole (a marker would cut one in two).
            text = self._replace_wrapped(text, wrappable)
        for value, name in forms.items():  # longest first
            if value in text:
                text = text.replace(value, _marker(name))
        return text

    def _replace_wrapped(self, text: str, wrappable: tuple[tuple[str, str], ...]) -> str:
        """Known forms split over the lines of wrapped base64 or hex output."""
        spans: list[tuple[int, int, str]] = []
        for joined, positions in unwrapped_blocks(text):
            for value, name in wrappable:
                at = joined.find(value)
                while at >= 0:
                    spans.append((positions[at], positions[at + len(value) - 1] + 1, name))
                    at = joined.find(value, at + len(value))
        limit = len(text)
        for start, end, name in sorted(spans, reverse=True):
            if end <= limit:  # overlapping matches: the later one stands for both
                text = text[:start] + _marker(name) + text[end:]
                limit = start
        return text

    def redact(self, text: str) -> str:
        """`text` with every secret replaced by `[REDACTED:<name or kind>]`."""
        if not text:
            return text
        self._refresh()
        text = self._replace_known(text)
        hits = [trigger for trigger in _TRIGGERS if trigger in text]
        if not hits:
            return text
        found: list[str] = []
        new: dict[str, str] = {}
        for index in sorted({index for trigger in hits for index in _TRIGGERS[trigger]}):
            key_format = KEY_FORMATS[index]
            replace = partial(self._replace, key_format, found)
            text = _compiled(index).sub(replace, text)
            for secret in found:
                if self._remember(secret, key_format.kind):
                    new.update(dict.fromkeys(secret_forms(secret), key_format.kind))
            found.clear()
        if new:
            text = self._replace_known(text, dict(sorted(new.items(), key=lambda f: -len(f[0]))))
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
