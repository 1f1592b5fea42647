"""The few distinctive strings a masked output's placeholder keeps.

A placeholder that only says "212 lines hidden" leaves the model guessing what is behind it;
one that names `ValueError`, `src/models/base.py` and `_save_parents` tells it what it could
recall, and often is all it needed. Candidates are the output's distinctive tokens (the rules
of `context_mgmt.later_use`: paths, snake_case and dotted identifiers, long numbers), ranked:
error names first, then failing test names, then names the output defines (`def`, `class`,
a C-family function), then paths, then identifiers, each class by how
often the output repeats the token (ties: first seen). At most `MAX_KEYS`, `MAX_KEY_CHARS` in
all. Pure and deterministic, so a placeholder stays byte-stable for the prompt cache.
"""

from __future__ import annotations

import re

from gosling.context_mgmt.later_use import _EDGES, _RUN, distinctive_tokens

MAX_KEYS = 8
MAX_KEY_CHARS = 240
KEY_CHARS = 60
"""Longer tokens (minified blobs, hashes in URLs) are skipped."""

_ERROR_NAME = re.compile(r"(?:Error|Exception|Failure|Warning)$")
_TEST_NAME = re.compile(r"(?:^|[/:.])test_\w+|::\w+$")
_PATH = re.compile(r"/|\.[A-Za-z]{1,5}$")
_ERROR_WORD = re.compile(r"\b([A-Z]\w*(?:Error|Exception))\b")
_DEFINED = re.compile(r"\b(?:def|class|fn|func|function|struct|enum|trait|type|interface)\s+(\w+)")
_C_DEFINED = re.compile(
    r"^[ \t]*(?:\d+[\t:|][ \t]*)?(?:[A-Za-z_][\w:<>]*[ \t*&]+)+\**([A-Za-z_]\w*)[ \t]*\([^;]*$",
    re.M,
)
"""A C-family function definition (`static ast_t* make_pattern_type(pass_opt_t* opt`), also
after the line number a file view puts first; a line ending in `;` is a call or a prototype."""
_EXTENSIONS = frozenset(
    {"py", "rs", "c", "h", "cc", "cpp", "go", "js", "ts", "tsx", "jsx", "java", "rb", "php"}
    | {"md", "json", "toml", "yaml", "yml", "txt", "cfg", "ini", "sh", "pony"}
)
_WORDLIKE = re.compile(r"[A-Za-z0-9]{2}")


def _rank(token: str, defined: set[str]) -> int:
    if _ERROR_NAME.search(token):
        return 0
    if _TEST_NAME.search(token):
        return 1
    if token in defined:
        return 2
    if "/" in token:
        return 3
    if token.isdigit():
        return 7
    if "." not in token:
        return 4  # a plain identifier
    if _PATH.search(token) and token.rsplit(".", 1)[-1] in _EXTENSIONS:
        return 5  # a file name
    return 6  # an attribute chain (self.field.name): usually noise


def placeholder_keys(text: str, *, exclude: str = "") -> list[str]:
    """Up to `MAX_KEYS` distinctive strings of `text`, most telling first; tokens already in
    `exclude` (the call's own arguments, shown anyway) are left out."""
    error_names = {n for n in _ERROR_WORD.findall(text) if len(n) > len("Error")}
    candidates = (distinctive_tokens(text) | error_names) - distinctive_tokens(exclude)
    if not candidates:
        return []
    defined = {*_DEFINED.findall(text), *_C_DEFINED.findall(text)}
    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    for position, run in enumerate(_RUN.findall(text)):
        token = run.strip(_EDGES)
        for name in (token, token.rsplit("/", 1)[-1]):
            if name in candidates:
                counts[name] = counts.get(name, 0) + 1
                first.setdefault(name, position)
    ranked = sorted(
        (t for t in candidates if len(t) <= KEY_CHARS and t in counts and _WORDLIKE.search(t)),
        key=lambda t: (_rank(t, defined), -counts[t], first[t]),
    )
    keys: list[str] = []
    used = 0
    for token in ranked:
        if any(token in kept for kept in keys):
            continue  # a path's last component when the path is kept already
        if len(keys) == MAX_KEYS or used + len(token) > MAX_KEY_CHARS:
            break
        keys.append(token)
        used += len(token) + 2
    return keys
