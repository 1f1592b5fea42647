"""Parse a shell command line with tree-sitter-bash and find every simple command in it.

`analyse(command)` walks the whole syntax tree: lists, pipelines, subshells, `{ }` groups,
`if`/`while`/`for`/`case` bodies, function bodies, `$()`, backticks, `<()`/`>()`, here-docs,
here-strings, arithmetic and assignments. Each simple command's argv goes through
`shell_wrappers` (wrappers, `sh -c`, `eval`, `xargs`, `find -exec`). Output redirections to
files and assignments to variables such as PATH are recorded as effects; syntax we do not
know, parse errors, excessive size or nesting make the command unjudgeable. The tree-sitter
modules are imported on the first call only, and results are cached per command string.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from gosling.agent.permissions.shell_model import (
    CODE_VARIABLES,
    ShellAnalysis,
    Word,
    assignment_is_harmless,
)
from gosling.agent.permissions.shell_words import Node, static_value
from gosling.agent.permissions.shell_wrappers import analyse_argv

MAX_CHARS = 100_000
MAX_NESTING = 8
"""Code strings inside code strings (`sh -c "eval 'bash -c ...'"`)."""
MAX_TREE_DEPTH = 200

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
"""Bytes bash and tree-sitter read differently (`\\f#` is a comment to one, a word to the
other); a backslash-newline likewise (bash removes it before it reads words)."""
_REBINDING_NAMES = re.compile(r"BASH_CMDS|BASH_ALIASES|BASH_FUNC_|BASH_LOADABLES_PATH")
"""The command hash, aliases, exported functions: anything that names them rebinds a name."""
_COMMENT_AFTER = frozenset(" \t\n;&|()<>")
_HEREDOC_DELIMITER = re.compile(r"^(?:[A-Za-z0-9_]+|'[A-Za-z0-9_]+'|\"[A-Za-z0-9_]+\")$")
_ARITHMETIC_LEAVES = frozenset(
    {"number", "binary_expression", "unary_expression", "ternary_expression",
     "postfix_expression", "parenthesized_expression"}
)  # fmt: skip
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_SUBSTRING = re.compile(r"\$\{[#!]?[A-Za-z_0-9@*]+(?:\[[^\]]*\])?:(?![-=?+])([^}]*)")
_ASSIGNING = re.compile(r"\$\{!?([A-Za-z_][A-Za-z_0-9]*)(\[)?[^}]*?:?=")
_SUBSCRIPT_CODE = re.compile(r"\[[^\]]*(\$\(|`)")
"""`a[$(cmd)]` in any text: bash runs cmd if the text is ever evaluated as a subscript."""
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_WRITE_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&", "&>|"})
_STRUCTURE = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "subshell",
        "compound_statement",
        "do_group",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "case_statement",
        "case_item",
        "negated_command",
        "redirected_statement",
        "test_command",
        "function_definition",
        "heredoc_body",
        "herestring_redirect",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "expansion",
        "string",
        "translated_string",
        "concatenation",
        "array",
        "subscript",
        "binary_expression",
        "unary_expression",
        "ternary_expression",
        "postfix_expression",
        "parenthesized_expression",
        "brace_expression",
        "variable_assignments",
    }
)
_LEAVES = frozenset(
    {
        "word",
        "number",
        "raw_string",
        "ansi_c_string",
        "string_content",
        "simple_expansion",
        "variable_name",
        "special_variable_name",
        "file_descriptor",
        "test_operator",
        "regex",
        "extglob_pattern",
        "heredoc_start",
        "heredoc_end",
        "heredoc_content",
        "comment",
        "command_name",
    }
)
_RESERVED = frozenset(
    [
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "do",
        "done",
        "case",
        "esac",
        "while",
        "until",
        "for",
        "in",
        "select",
        "function",
        "{",
        "}",
        "!",
        "[[",
        "]]",
    ]
)
"""Unquoted in command position these are bash keywords; tree-sitter sometimes reads them as
program names (`! if true; then rm x; fi`), and such a tree cannot be trusted."""
_BARE_NEWLINE = re.compile(r"(?:^|[^\\])(?:\\\\)*\n")
"""A newline in an unquoted word that no backslash escapes: tree-sitter glued two lines."""
_TEXT_LEAVES = frozenset({"word", "regex", "string_content", "extglob_pattern"})
"""Leaves that bash may still expand; a backtick or `$(` left in them was not parsed."""
_UNPARSED_DOLLAR_PAREN = re.compile(r"(?:^|[^\\])(?:\\\\)*\$\(")
_PROMPT_EXPANSION = re.compile(r"@P\}$")


@functools.cache
def parser() -> Any:
    """The tree-sitter-bash parser, built on first use."""
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


@functools.lru_cache(maxsize=2048)
def analyse(command: str) -> ShellAnalysis:
    """Everything `command` would run, write or leave unjudgeable (cached per string)."""
    try:
        return _analyse(command, 0)
    except RecursionError:
        return ShellAnalysis(unknowns=["it is nested too deeply"])


def _analyse(command: str, nesting: int) -> ShellAnalysis:
    out = ShellAnalysis()
    if len(command) > MAX_CHARS:
        out.unknowns.append(f"it is longer than {MAX_CHARS} characters")
        return out
    if nesting > MAX_NESTING:
        out.unknowns.append("its code strings are nested too deeply")
        return out
    control = _CONTROL.search(command)
    if control:
        out.unknowns.append(f"it holds the control character U+{ord(control.group()):04X}")
        return out
    if "\\\n" in command:
        out.unknowns.append("a backslash-newline, which bash removes before it reads words")
        return out
    rebinding = _REBINDING_NAMES.search(command)
    if rebinding:
        out.unknowns.append(f"it names {rebinding.group()}, which rebinds what a name runs")
        return out
    for match in _SUBSTRING.finditer(command):
        if not re.fullmatch(r"[\s\d:-]*", match.group(1)):
            out.unknowns.append("a substring offset that bash evaluates as arithmetic")
            return out
    for match in _ASSIGNING.finditer(command):
        if match.group(2) or not assignment_is_harmless(match.group(1)):
            out.unknowns.append(f"${{{match.group(1)}:=...}} assigns to {match.group(1)}")
            return out
    data = command.encode("utf-8", "surrogateescape")
    tree = parser().parse(data)
    if tree.root_node.has_error:
        out.unknowns.append("bash syntax that cannot be parsed")
        return out
    _Walker(out, nesting, data).walk(tree.root_node, 0)
    return out


def _backtick_code(text: str) -> list[str] | None:
    """The code inside each unescaped backtick pair of `text`; None when one is unclosed."""
    pieces: list[str] = []
    current: list[str] | None = None
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            if current is not None:
                current.append(text[index : index + 2])
            index += 2
            continue
        if char == "`":
            if current is None:
                current = []
            else:
                pieces.append("".join(current))
                current = None
        elif current is not None:
            current.append(char)
        index += 1
    return None if current is not None else pieces


class _Walker:
    def __init__(self, out: ShellAnalysis, nesting: int, data: bytes) -> None:
        self.out = out
        self.nesting = nesting
        self.data = data

    def walk(self, node: Node, depth: int) -> None:
        if depth > MAX_TREE_DEPTH:
            self.out.unknowns.append("it is nested too deeply")
            return
        kind = node.type
        if not node.is_named:
            return
        if kind == "word" and _BARE_NEWLINE.search(node.text.decode("utf-8", "surrogateescape")):
            self.out.unknowns.append("a line break inside a word")
        if kind == "word" and not node.text.isascii():
            self.out.unknowns.append("a word with characters outside ASCII")
        if kind == "comment" and node.start_byte > 0:
            before = self.data[node.start_byte - 1 : node.start_byte].decode("latin-1")
            if before not in _COMMENT_AFTER:
                self.out.unknowns.append("a # that bash may not read as a comment")
        if kind == "subscript":
            self._subscript(node)
        if kind in ("arithmetic_expansion", "c_style_for_statement") or (
            kind == "compound_statement" and node.children and node.children[0].type == "(("
        ):
            self._arithmetic(node)
        if kind == "test_command":
            self._test(node)
        if kind in _TEXT_LEAVES:
            self._unparsed_substitutions(node)
        if kind == "expansion" and _PROMPT_EXPANSION.search(node.text.decode()):
            self.out.unknowns.append("${var@P} runs the code in a variable")
        if kind in ("raw_string", "ansi_c_string", "string_content", "word"):
            value = static_value(node) if kind != "string_content" else node.text.decode()
            if value is not None and _SUBSCRIPT_CODE.search(value):
                # `let`, `(( ))`, `[[ -eq ]]`, `unset`, `printf -v`, `read` evaluate it.
                self.out.unknowns.append("text that bash may run as an array subscript")
        if kind == "heredoc_redirect":
            self._heredoc(node, depth)
        elif kind == "command":
            self._command(node, depth)
        elif kind in ("declaration_command", "unset_command"):
            self._declaration(node, depth)
        elif kind == "variable_assignment":
            self._assignment(node, depth, prefix=False)
        elif kind in ("file_redirect", "herestring_redirect"):
            self._redirect(node, depth)
        elif kind in _STRUCTURE:
            self._children(node, depth)
        elif kind not in _LEAVES:
            self.out.unknowns.append(f"unsupported shell syntax ({kind})")

    def _subscript(self, node: Node) -> None:
        """`a[$i]` is arithmetic on $i's value, which can hold `x[$(cmd)]`."""
        index = node.named_children[1:] if len(node.named_children) > 1 else []
        for part in index:
            if part.type not in ("number", "word") or not re.fullmatch(
                rb"[A-Za-z0-9_]+", part.text
            ):
                self.out.unknowns.append("a subscript that bash evaluates as arithmetic")
                return

    def _arithmetic(self, node: Node) -> None:
        """Arithmetic evaluates variables' values as expressions, and their subscripts run
        code (`$(( $(cat payload) ))` runs what the file says): only numbers are judged."""
        stack = [c for c in node.named_children if c.type not in ("do_group",)]
        while stack:
            child = stack.pop()
            if child.type not in _ARITHMETIC_LEAVES:
                self.out.unknowns.append("arithmetic on a value only known at run time")
                return
            stack.extend(child.named_children)

    def _test(self, node: Node) -> None:
        for child in node.named_children:
            operators = [c for c in child.children if c.type == "test_operator"]
            texts = {c.text.decode() for c in operators}
            if "-v" in texts or "-R" in texts:
                self.out.unknowns.append("[[ -v ]] evaluates a subscript")
            if texts & _ARITHMETIC_TESTS and any(
                c.type != "number" for c in child.named_children if c.type != "test_operator"
            ):
                self.out.unknowns.append("[[ -eq ]] evaluates its operands as arithmetic")

    def _unparsed_substitutions(self, node: Node) -> None:
        """tree-sitter leaves some backticks (`${v:-`cmd`}`) as plain text; bash runs them."""
        text = node.text.decode("utf-8", "surrogateescape")
        if _UNPARSED_DOLLAR_PAREN.search(text):
            self.out.unknowns.append("a command substitution the parser did not read")
        if "`" in text:
            self._backticks(text)

    def _heredoc(self, node: Node, depth: int) -> None:
        """tree-sitter leaves backticks in an unquoted here-doc body as text; bash runs them."""
        self._children(node, depth)
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        if start is not None and not _HEREDOC_DELIMITER.match(start.text.decode().lstrip("-")):
            self.out.unknowns.append("a here-doc delimiter gosling does not read like bash")
            return
        if start is None or body is None or any(q in start.text.decode() for q in "'\"\\"):
            return
        self._backticks(body.text.decode("utf-8", "surrogateescape"))

    def _backticks(self, text: str) -> None:
        pieces = _backtick_code(text)
        if pieces is None:
            self.out.unknowns.append("an unbalanced backtick")
            return
        for code in pieces:
            self.out.merge(_analyse(code, self.nesting + 1))

    def _children(self, node: Node, depth: int) -> None:
        for child in node.children:
            self.walk(child, depth + 1)

    def _command(self, node: Node, depth: int) -> None:
        argv: list[Word] = []
        for child in node.named_children:
            if child.type == "command_name":
                name = child.named_children[0]
                if name.type == "word" and name.text.decode() in _RESERVED:
                    self.out.unknowns.append(f"the keyword {name.text.decode()!r} out of place")
                argv.append(static_value(name))
                self._children(child, depth)
            elif child.type == "variable_assignment":
                self._assignment(child, depth, prefix=True)
            elif child.type in ("file_redirect", "herestring_redirect"):
                self._redirect(child, depth)
            elif child.type == "comment":
                continue
            else:
                argv.append(static_value(child))
                self.walk(child, depth + 1)
        if argv:
            self.out.merge(analyse_argv(argv, self.nesting, _analyse))

    def _declaration(self, node: Node, depth: int) -> None:
        keyword = node.children[0].text.decode()
        argv: list[Word] = [keyword]
        harmless = True
        for child in node.named_children:
            if child.type == "variable_assignment":
                name = child.named_children[0]
                harmless = harmless and self._name_is_harmless(name)
                self._children(child, depth)
                argv.append(None)
            elif child.type == "variable_name":
                harmless = harmless and self._name_is_harmless(child)
                argv.append(child.text.decode())
            elif child.type in ("file_redirect", "herestring_redirect"):
                self._redirect(child, depth)
            else:
                value = static_value(child)
                if value is None or (value.startswith(("-", "+")) and set(value) & set("ni")):
                    self.out.unknowns.append(f"{keyword} {value or '<expansion>'} binds names")
                harmless = harmless and value is not None and value.startswith("-")
                argv.append(value)
                self.walk(child, depth + 1)
        if harmless:
            return
        self.out.merge(analyse_argv(argv, self.nesting, _analyse))

    def _assignment(self, node: Node, depth: int, *, prefix: bool) -> None:
        name = node.named_children[0] if node.named_children else node
        if name.text.startswith(b"GIT_"):
            self.out.unknowns.append(f"it sets {name.text.decode()}, which points git elsewhere")
        if not self._name_is_harmless(name):
            where = "for the program" if prefix else "in the shell"
            self.out.effects.append(f"it sets {name.text.decode()} {where}")
        self._children(node, depth)

    def _name_is_harmless(self, name: Node) -> bool:
        if name.text.decode() in CODE_VARIABLES:
            self.out.unknowns.append(f"it sets {name.text.decode()}, whose value bash may run")
        if name.type == "subscript":
            return False
        return name.type == "variable_name" and assignment_is_harmless(name.text.decode())

    def _redirect(self, node: Node, depth: int) -> None:
        self._children(node, depth)
        if node.type == "herestring_redirect":
            return
        operator = next((c.type for c in node.children if not c.is_named), "")
        if operator not in _WRITE_OPERATORS:
            return
        target_node = node.child_by_field_name("destination") or node.named_children[-1]
        target = static_value(target_node)
        if operator == ">&" and target is not None and (target.isdigit() or target == "-"):
            return
        if target in _HARMLESS_TARGETS:
            return
        shown = target if target is not None else target_node.text.decode()
        self.out.effects.append(f"it writes to {shown}")
