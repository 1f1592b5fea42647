"""The value of one bash word as bash would see it, or None when it is not static.

A word is static when bash would turn it into exactly one known string: quotes removed,
backslashes and `$'...'` escapes decoded. Anything that depends on run time (parameter,
command or arithmetic expansion, globs, brace expansion, a leading `~`) is not static, so no
rule can vouch for it.
"""

from __future__ import annotations

import re
from typing import Any

Node = Any
"""A tree_sitter.Node (typed loosely so that this module never imports tree_sitter)."""

_GLOB = re.compile(r"[*?]|\[.*\]")
_BRACES = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_ESCAPE = re.compile(
    r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL
)


def static_value(node: Node) -> str | None:
    """The word's value, or None when it is not a single static string."""
    parts = _parts(node)
    if parts is None:
        return None
    unquoted = "".join(text if not quoted else "\0" * len(text) for text, quoted in parts)
    if _GLOB.search(unquoted) or _BRACES.search(unquoted) or unquoted.startswith("~"):
        return None
    return "".join(text for text, _ in parts)


def _parts(node: Node) -> list[tuple[str, bool]] | None:
    """(text, quoted) pieces of a word, or None when some piece is expanded at run time."""
    kind = node.type
    text = node.text.decode("utf-8", "surrogateescape")
    if kind in ("word", "number"):
        return [(_unescape(text, None), False)] if kind == "word" else [(text, False)]
    if kind == "raw_string":
        return [(text[1:-1], True)]
    if kind == "ansi_c_string":
        return [(decode_ansi_c(text[2:-1]), True)]
    if kind == "string":
        if any(child.type != "string_content" for child in node.named_children):
            return None
        return [(_unescape(text[1:-1], '$`"\\\n'), True)]
    if kind == "concatenation":
        pieces: list[tuple[str, bool]] = []
        for child in node.named_children:
            part = _parts(child)
            if part is None:
                return None
            pieces.extend(part)
        return pieces
    return None


def _unescape(text: str, escapable: str | None) -> str:
    """Remove backslashes as bash does: before any character outside quotes (`escapable`
    None), only before `$`, backtick, `"`, backslash and newline inside double quotes.
    A backslash-newline disappears entirely."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            following = text[index + 1]
            if escapable is None or following in escapable:
                if following != "\n":
                    out.append(following)
                index += 2
                continue
        out.append(char)
        index += 1
    return "".join(out)


def decode_ansi_c(body: str) -> str:
    """Decode the inside of a `$'...'` string the way bash does."""

    def replace(match: re.Match[str]) -> str:
        escape = match.group(1)
        head = escape[0]
        if head in "xuU":
            return chr(min(int(escape[1:], 16), 0x10FFFF))
        if head in "01234567":
            return chr(int(escape, 8) & 0xFF)
        if head == "c":
            return chr(ord(escape[1].upper()) ^ 0x40)
        return _ANSI_SIMPLE.get(head, "\\" + escape)

    decoded = _ANSI_ESCAPE.sub(replace, body)
    # bash stops a $'...' string at a NUL byte.
    return decoded.split("\0", 1)[0]
