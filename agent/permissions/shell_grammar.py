"""The closed grammar that allow rules (and `smart_approve`) may approve: nothing else.

A line is inside it only when every byte is accounted for by tokens gosling reads the same
way bash does: simple commands of plain words (letters, digits, `_./:,+=@%^-`, the globs
`*` `?` after a literal prefix), single-quoted strings, double-quoted strings without `$`,
backtick, backslash or `!`, joined by `|`, `;`, `&&`, `||` and newlines; redirections that
read a file or write to /dev/null or duplicate a descriptor. Control characters (`\\f`,
`\\v`, `\\r`, ...), backslashes outside single quotes, non-ASCII outside quotes, comments,
assignments, expansions of any kind, here-docs, background jobs and every compound command
are outside, and so is anything tree-sitter-bash reads with a gap that is not a blank (a
byte it skipped, as it skips a comment after `\\f`). tree-sitter finds the tokens; this
module never trusts it further than that: each token's text is checked again here.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from gosling.agent.permissions.shell_words import Node

MAX_CHARS = 10_000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_PLAIN = re.compile(r"^[A-Za-z0-9_./:,+=@%^*?-][A-Za-z0-9_./:,+=@%^*?#-]*$")
"""`#` only inside a word: at a word's start bash reads a comment."""
_PROGRAM = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
_IN_DOUBLE_QUOTES = re.compile(r'^[^$`\\!"]*$')
_STRUCTURE = frozenset({"program", "list", "pipeline", "redirected_statement"})
_SEPARATORS = frozenset({";", "&&", "||", "|"})
_READ = frozenset({"<"})
_WRITE_NULL = frozenset({">", ">>", "&>", "&>>"})
_BLANKS = frozenset(" \t\n")


@dataclass(frozen=True)
class SimpleCommand:
    argv: tuple[str, ...]
    globbed: tuple[bool, ...]
    """Whether each word holds a glob (`src/*.py`), so it may become several operands."""


@dataclass(frozen=True)
class Reading:
    commands: tuple[SimpleCommand, ...] = ()
    refusal: str | None = None
    """Why the line is outside the grammar; None when it is inside."""


class _Outside(Exception):
    pass


def read_closed(command: str) -> Reading:
    """The simple commands of `command`, or why it is outside the closed grammar."""
    try:
        return Reading(commands=tuple(_read(command)))
    except _Outside as outside:
        return Reading(refusal=str(outside))


def _read(command: str) -> list[SimpleCommand]:
    if len(command) > MAX_CHARS:
        raise _Outside(f"it is longer than {MAX_CHARS} characters")
    control = _CONTROL.search(command)
    if control:
        raise _Outside(f"it holds the control character U+{ord(control.group()):04X}")
    if not command.strip():
        raise _Outside("it is empty")
    from gosling.agent.permissions.shell_parse import parser

    data = command.encode("utf-8", "surrogateescape")
    root = parser().parse(data).root_node
    if root.has_error:
        raise _Outside("bash syntax that cannot be parsed")
    covered = bytearray(len(data))
    commands: list[SimpleCommand] = []
    _walk(root, data, covered, commands)
    for index, byte in enumerate(data):
        if not covered[index] and chr(byte) not in _BLANKS:
            raise _Outside(f"the parser skipped {chr(byte)!r}, which bash may read")
    return commands


def _cover(node: Node, covered: bytearray) -> None:
    for index in range(node.start_byte, node.end_byte):
        covered[index] = 1


def _walk(node: Node, data: bytes, covered: bytearray, out: list[SimpleCommand]) -> None:
    kind = node.type
    if kind == "command":
        out.append(_command(node, data, covered))
        return
    if kind == "file_redirect":
        _redirect(node, data, covered)
        return
    if not node.is_named:
        if kind not in _SEPARATORS:
            raise _Outside(f"the operator {kind!r}")
        _cover(node, covered)
        return
    if kind not in _STRUCTURE:
        raise _Outside(f"shell syntax beyond plain commands ({kind.replace('_', ' ')})")
    for child in node.children:
        _walk(child, data, covered, out)


def _command(node: Node, data: bytes, covered: bytearray) -> SimpleCommand:
    argv: list[str] = []
    globbed: list[bool] = []
    previous_end: int | None = None
    for child in node.children:
        joined = previous_end is not None and child.start_byte == previous_end
        if joined and (child.type != "file_redirect" or data[child.start_byte] not in b"<>&"):
            raise _Outside("two words that bash would join")
        previous_end = child.end_byte
        if child.type == "command_name":
            name = child.named_children[0] if child.named_children else child
            text, glob = _word(name)
            if glob or not _PROGRAM.match(text):
                raise _Outside(f"the program name {text!r} is not a plain name")
            argv.append(text)
            globbed.append(False)
            _cover(child, covered)
        elif child.type == "file_redirect":
            _redirect(child, data, covered)
        else:
            value, glob = _word(child)
            argv.append(value)
            globbed.append(glob)
            _cover(child, covered)
    if not argv:
        raise _Outside("a redirection without a command")
    return SimpleCommand(tuple(argv), tuple(globbed))


def _word(node: Node) -> tuple[str, bool]:
    """A word's value and whether it globs; anything but plain text and quotes is outside."""
    parts = node.named_children if node.type == "concatenation" else [node]
    if node.type == "concatenation":
        for left, right in itertools.pairwise(parts):
            if left.end_byte != right.start_byte:
                raise _Outside("a word the parser split")
    value: list[str] = []
    first_glob: int | None = None
    for part in parts:
        text = part.text.decode("utf-8", "surrogateescape")
        if part.type in ("word", "number"):
            if not _PLAIN.match(text):
                raise _Outside(f"the word {text!r} holds characters bash may expand")
            glob = min((text.index(c) for c in "*?" if c in text), default=None)
            if glob is not None and first_glob is None:
                first_glob = len("".join(value)) + glob
            value.append(text)
        elif part.type == "raw_string":
            value.append(text[1:-1])
        elif part.type == "string":
            inner = text[1:-1]
            if any(c.type != "string_content" for c in part.named_children):
                raise _Outside(f"an expansion inside {text!r}")
            if not _IN_DOUBLE_QUOTES.match(inner):
                raise _Outside(f"{text!r} holds characters bash expands inside double quotes")
            value.append(inner)
        else:
            raise _Outside(f"shell syntax beyond plain words ({part.type.replace('_', ' ')})")
    joined = "".join(value)
    if first_glob is not None:
        prefix = joined[:first_glob]
        if not prefix or prefix.startswith("-"):
            raise _Outside(f"the glob {joined!r} could expand to an option")
    return joined, first_glob is not None


def _redirect(node: Node, data: bytes, covered: bytearray) -> None:
    children = node.children
    operator = next((c for c in children if not c.is_named), None)
    target = node.named_children[-1] if node.named_children else None
    if operator is None or target is None or target.start_byte < operator.end_byte:
        raise _Outside("a redirection gosling does not read")
    descriptor = [c for c in node.named_children if c.type == "file_descriptor"]
    if descriptor and descriptor[0].end_byte != operator.start_byte:
        raise _Outside("a descriptor apart from its redirection")
    text = target.text.decode("utf-8", "surrogateescape")
    kind = operator.type
    if kind in _READ:
        if target.type != "word" or not _PLAIN.match(text) or set(text) & set("*?"):
            raise _Outside(f"reading {text!r}")
        if text.startswith("/dev/") and text != "/dev/null":
            raise _Outside(f"reading the device {text}")
    elif kind in _WRITE_NULL:
        if text != "/dev/null":
            raise _Outside(f"it writes to {text}")
    elif kind == ">&":
        if not text.isdigit():
            raise _Outside(f"it writes to {text}")
    else:
        raise _Outside(f"the redirection {kind!r}")
    for child in children:
        _cover(child, covered)
