"""Which environment variables hold credentials.

A variable is a credential when a `_`-separated word of its name says so (a word ending in
KEY, or containing SECRET, TOKEN, PASSWORD, PASSWD, CREDENTIAL or WEBHOOK, or starting with
AUTH), or when its value is a URL that carries a password (`postgres://u:pw@host/db`), whatever
the name. The rule is deliberately wide: hiding a harmless value costs little, leaking a key
costs a lot.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_WORD = re.compile(r"[A-Z0-9]+")
_CONTAINS = ("SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "WEBHOOK")
_URL_WITH_PASSWORD = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@")


def _credential_word(word: str) -> bool:
    return word.endswith("KEY") or word.startswith("AUTH") or any(w in word for w in _CONTAINS)


def is_credential_env(name: str, value: str = "") -> bool:
    """True when `name=value` should never reach a tool process, the store or the screen."""
    if any(_credential_word(word) for word in _WORD.findall(name.upper())):
        return True
    return bool(_URL_WITH_PASSWORD.match(value.strip()))


def credential_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The credential-like variables of `environ`."""
    return {name: value for name, value in environ.items() if is_credential_env(name, value)}
