"""Which environment variables hold credentials.

A variable is a credential when a word of its name says so, or when its value carries a
password (a URL with one, `postgres://u:pw@host/db`, or a connection string's
`password=`/`Pwd=` parameter), whatever the name. Words are the `_`-separated parts of the
upper-cased name; a word counts when it

- ends in KEY, PASS, PWD, PAT or DSN (`API_KEY`, `DB_PASS`, `MYSQL_PWD`, `GLPAT`,
  `SENTRY_DSN`),
- contains SECRET, TOKEN, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL, WEBHOOK, JWT, COOKIE or
  PRIVATE, or
- starts with AUTH.

`PWD` and `OLDPWD` as whole names are the shell's current and previous directory, not
passwords: a directory is never a secret, and hiding it would take `$PWD` from every command.
`BYPASS` and `COMPASS` do not end in a password. The rule is otherwise deliberately wide:
hiding a harmless value costs little, leaking a key costs a lot.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_WORD = re.compile(r"[A-Z0-9]+")
_ENDS = ("KEY", "PASS", "PWD", "PAT", "DSN")
_CONTAINS = (
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "WEBHOOK",
    "JWT",
    "COOKIE",
    "PRIVATE",
)
_NOT_CREDENTIAL_WORDS = frozenset({"BYPASS", "COMPASS"})
SHELL_DIRECTORIES = frozenset({"PWD", "OLDPWD"})
"""Whole names that hold a directory, never a secret."""
_URL_WITH_PASSWORD = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@")
CONNECTION_PASSWORD = re.compile(
    r"(?i)(?:^|[?&;\s])(?:password|passwd|pwd)\s*=\s*(?P<password>[^;&\s\"'<>]+)"
)
"""A connection string's password parameter: JDBC `?password=`, ADO.NET/ODBC `;Pwd=`,
libpq `password=`."""
ORACLE_PASSWORD = re.compile(r"jdbc:oracle:[a-z]+:[^/@\s:\"']+/(?P<password>[^@\s\"']+)@")
"""Oracle's thin URL, `jdbc:oracle:thin:user/password@host:1521/db`."""


def _credential_word(word: str) -> bool:
    if word in _NOT_CREDENTIAL_WORDS:
        return False
    return word.endswith(_ENDS) or word.startswith("AUTH") or any(w in word for w in _CONTAINS)


def is_credential_env(name: str, value: str = "") -> bool:
    """True when `name=value` should never reach a tool process, the store or the screen."""
    upper = name.upper()
    if upper not in SHELL_DIRECTORIES and any(_credential_word(w) for w in _WORD.findall(upper)):
        return True
    stripped = value.strip()
    return bool(
        _URL_WITH_PASSWORD.match(stripped)
        or CONNECTION_PASSWORD.search(stripped)
        or ORACLE_PASSWORD.search(stripped)
    )


def credential_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The credential-like variables of `environ`."""
    return {name: value for name, value in environ.items() if is_credential_env(name, value)}
