"""A secret as it looks once encoded: base64 (standard and URL-safe), hex (lower case, as
`xxd`, `od` and `hexdump` print it), URL-encoded.

A secret inside a larger encoded text (`base64 ~/.bashrc`, where it is one line among
others) does not start on a base64 group boundary, so its encoding depends on the bytes
before it. Only the characters that come from the secret's bytes alone are fixed: for each of
the three alignments, the full 4-character groups made of secret bytes only. Those three
cores are what is searched for; each is as specific as the secret itself (6 secret bytes
give 8 characters).

`base64` and `xxd -p` wrap their output over lines; `unwrapped_blocks` finds such blocks of
lines so that the cores can be searched with the line breaks taken out.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from urllib.parse import quote, quote_plus

_BLOCK = re.compile(r"(?m)^[A-Za-z0-9+/_-]{16,}={0,2}\r?\n(?:[A-Za-z0-9+/_-]+={0,2}(?:\r?\n|$))+")
"""Two or more lines of base64 or hex (the first at least 16 characters): wrapped output."""


def base64_cores(data: bytes, *, urlsafe: bool = False) -> set[str]:
    """The parts of `data`'s base64 encoding that are the same wherever `data` starts."""
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    cores = set()
    for offset in range(3):
        encoded = encode(b"\0" * offset + data).decode("ascii")
        start = 4 if offset else 0
        end = 4 * ((offset + len(data)) // 3)
        if end > start:
            cores.add(encoded[start:end])
    return cores


def encoded_forms(secret: str, min_length: int) -> set[str]:
    """Every encoded form of `secret` of at least `min_length` characters, `secret` itself
    excluded."""
    data = secret.encode("utf-8")
    forms = base64_cores(data) | base64_cores(data, urlsafe=True)
    forms |= {data.hex(), quote(secret, safe=""), quote(secret), quote_plus(secret, safe="")}
    forms.discard(secret)
    return {form for form in forms if len(form) >= min_length}


def unwrapped_blocks(text: str) -> Iterator[tuple[str, list[int]]]:
    """Each block of wrapped base64/hex lines of `text`, joined without its line breaks, with
    the index in `text` of every character of the joined string."""
    for match in _BLOCK.finditer(text):
        positions = [
            match.start() + i for i, char in enumerate(match.group()) if char not in "\r\n"
        ]
        yield "".join(text[i] for i in positions), positions
