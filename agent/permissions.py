"""Whether a tool call may run: permission modes, ordered rules, and one pure `decide`.

Modes (goose's): `auto` runs everything, `approve` asks before every tool, `smart_approve`
asks only for tools not annotated read-only, `chat` offers no tools at all (the agent sends
none, and `decide` denies anything that still arrives).

Rules come from config as `<tool>` or `<tool>(<specifier>)`, each with an action. For the
shell tool the specifier is an argv prefix (`developer__shell(git diff)` matches `git diff
--stat`); for other tools it is a gitignore-style pattern matched on the resolved `path`
argument relative to the working dir (`developer__write(src/**)`). Tool names may use
globs (`git__*`). Precedence is deny > ask > allow whatever the order; within a level the
first matching rule gives the reason.

A compound shell command (`;`, `&&`, `||`, `|`, `&`, `$(`, backticks, redirects, newlines)
can hide one command behind another, so no allow rule approves it: it asks, unless the mode
is `auto` and no deny/ask shell rule exists that it could be smuggling past. Deny and ask
rules are still checked against each part of it.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import pathspec

from agent.tools.base import ToolAnnotations, ToolResult


class PermissionMode(StrEnum):
    AUTO = "auto"
    APPROVE = "approve"
    SMART_APPROVE = "smart_approve"
    CHAT = "chat"


class Verdict(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


_PRECEDENCE = (Verdict.DENY, Verdict.ASK, Verdict.ALLOW)
_MODE_ALIASES = {"smart": PermissionMode.SMART_APPROVE}
_RULE = re.compile(r"^\s*([A-Za-z0-9_*?\[\]-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_SHELL_OPERATORS = frozenset(";&|<>()")
PATH_ARGUMENTS = ("path", "file_path", "repo_path", "filename")
"""Argument names that file rules look at."""


def parse_mode(value: str) -> PermissionMode:
    """A mode from config or a flag, with an error that lists the choices."""
    text = value.strip().lower().replace("-", "_")
    if text in _MODE_ALIASES:
        return _MODE_ALIASES[text]
    try:
        return PermissionMode(text)
    except ValueError:
        choices = ", ".join(m.value for m in PermissionMode)
        raise ValueError(f"unknown permission mode {value!r}; choose one of: {choices}") from None


def is_shell_tool(name: str) -> bool:
    return name == "shell" or name.endswith("__shell")


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    reason: str

    @property
    def allowed(self) -> bool:
        return self.verdict is Verdict.ALLOW


@dataclass(frozen=True)
class PermissionRule:
    """One rule: an action for tools matching `tool`, optionally narrowed by a specifier."""

    action: Verdict
    tool: str
    """An exposed tool name, or a glob over them (`git__*`, `*`)."""
    argv_prefix: tuple[str, ...] | None = None
    """Shell rules: the command's words must start with these."""
    paths: tuple[str, ...] | None = None
    """File rules: gitignore-style patterns on the path relative to the working dir."""

    @classmethod
    def parse(cls, action: Verdict | str, text: str) -> PermissionRule:
        """Parse `tool` or `tool(specifier)`; shell tools take a command prefix (a trailing
        ` *` or `:*` is accepted and ignored), other tools comma-separated path patterns."""
        verdict = Verdict(action)
        match = _RULE.match(text)
        if not match:
            raise ValueError(
                f"cannot read permission rule {text!r}; write 'tool' or 'tool(specifier)', "
                "for example 'developer__shell(git status)' or 'developer__write(src/**)'"
            )
        tool, spec = match.group(1), match.group(2)
        if spec is None or not spec.strip():
            return cls(verdict, tool)
        if is_shell_tool(tool):
            words = shlex.split(re.sub(r"(?::\*|\s\*)\s*$", "", spec.strip()))
            return cls(verdict, tool, argv_prefix=tuple(words))
        patterns = tuple(p.strip() for p in spec.split(",") if p.strip())
        return cls(verdict, tool, paths=patterns)

    def describe(self) -> str:
        if self.argv_prefix is not None:
            return f"{self.action} {self.tool}({shlex.join(self.argv_prefix)})"
        if self.paths is not None:
            return f"{self.action} {self.tool}({', '.join(self.paths)})"
        return f"{self.action} {self.tool}"


def rules_from_lists(
    allow: Sequence[str] = (), ask: Sequence[str] = (), deny: Sequence[str] = ()
) -> tuple[PermissionRule, ...]:
    """Rules from the three config lists (`[permissions] allow = [...]` and so on)."""
    return tuple(
        PermissionRule.parse(verdict, text)
        for verdict, texts in ((Verdict.DENY, deny), (Verdict.ASK, ask), (Verdict.ALLOW, allow))
        for text in texts
    )


DEFAULT_RULES: tuple[PermissionRule, ...] = rules_from_lists(
    ask=[
        "developer__view(.env, .env.*, *.pem, *.key, id_rsa*, id_ed25519*)",
        "developer__write(.env, .env.*, *.pem, *.key, .git/)",
        "developer__edit(.env, .env.*, *.pem, *.key, .git/)",
    ]
)
"""Secrets and git internals: ask before the file tools touch them (prepended by default)."""


@dataclass(frozen=True)
class PermissionSettings:
    mode: PermissionMode = PermissionMode.AUTO
    rules: tuple[PermissionRule, ...] = ()
    default_rules: bool = True
    """Add `DEFAULT_RULES` (ask before touching .env files, keys and .git/)."""

    def effective_rules(self) -> tuple[PermissionRule, ...]:
        return (*self.rules, *DEFAULT_RULES) if self.default_rules else self.rules


def compound_reason(command: str) -> str | None:
    """Why `command` is compound (runs or redirects more than one thing), or None."""
    if "\n" in command.strip():
        return "it has several lines"
    if "$(" in command or "`" in command:
        return "it uses command substitution"
    try:
        # Non-POSIX mode keeps quotes on the tokens, so a quoted ';' is not an operator.
        lexer = shlex.shlex(command, posix=False, punctuation_chars=";&|<>()")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return "it cannot be parsed (unbalanced quotes)"
    for token in tokens:
        if token and set(token) <= _SHELL_OPERATORS:
            return f"it contains {token!r}"
    return None


def command_segments(command: str) -> list[list[str]]:
    """Best-effort argv of each simple command inside a (compound) command line."""
    flat = re.sub(r"\$\(|`|\)", " ; ", command.replace("\n", " ; "))
    try:
        lexer = shlex.shlex(flat, posix=True, punctuation_chars=";&|<>()")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return [flat.split()]
    segments: list[list[str]] = [[]]
    for token in tokens:
        if token and set(token) <= _SHELL_OPERATORS:
            segments.append([])
        else:
            segments[-1].append(token)
    return [s for s in segments if s]


def decide(
    tool_name: str,
    arguments: Mapping[str, Any],
    annotations: ToolAnnotations | None,
    mode: PermissionMode,
    rules: Sequence[PermissionRule],
    working_dir: Path,
) -> Decision:
    """Allow, ask or deny one tool call. Pure: no I/O beyond resolving paths."""
    if mode is PermissionMode.CHAT:
        return Decision(Verdict.DENY, "chat mode: tools are turned off")
    command = arguments.get("command") if is_shell_tool(tool_name) else None
    compound = compound_reason(command) if isinstance(command, str) else None
    matched = [r for r in rules if _matches(r, tool_name, arguments, working_dir, compound)]
    for verdict in (Verdict.DENY, Verdict.ASK):
        hit = next((r for r in matched if r.action is verdict), None)
        if hit is not None:
            return Decision(verdict, f"rule '{hit.describe()}'")
    if compound is not None:
        guarded = any(
            r.action is not Verdict.ALLOW and r.argv_prefix and _tool_matches(r, tool_name)
            for r in rules
        )
        if mode is not PermissionMode.AUTO or guarded:
            return Decision(
                Verdict.ASK, f"compound shell command ({compound}); rules cannot vouch for it"
            )
        return Decision(Verdict.ALLOW, "auto mode")
    allow = next((r for r in matched if r.action is Verdict.ALLOW), None)
    if allow is not None:
        return Decision(Verdict.ALLOW, f"rule '{allow.describe()}'")
    if mode is PermissionMode.AUTO:
        return Decision(Verdict.ALLOW, "auto mode")
    if mode is PermissionMode.SMART_APPROVE and annotations is not None and annotations.read_only:
        return Decision(Verdict.ALLOW, "read-only tool (smart_approve mode)")
    return Decision(Verdict.ASK, f"{mode.value} mode")


def _tool_matches(rule: PermissionRule, tool_name: str) -> bool:
    return fnmatch.fnmatchcase(tool_name, rule.tool)


def _matches(
    rule: PermissionRule,
    tool_name: str,
    arguments: Mapping[str, Any],
    working_dir: Path,
    compound: str | None,
) -> bool:
    if not _tool_matches(rule, tool_name):
        return False
    if rule.argv_prefix is not None:
        command = arguments.get("command")
        if not isinstance(command, str):
            return False
        prefix = list(rule.argv_prefix)
        if compound is None:
            return _starts_with(_split(command), prefix)
        # Allow rules never match compound commands; deny/ask rules match any part.
        if rule.action is Verdict.ALLOW:
            return False
        return any(_starts_with(words, prefix) for words in command_segments(command))
    if rule.paths is not None:
        relative = _relative_path(arguments, working_dir)
        if relative is None:
            return False
        return _compiled(rule.paths).match_file(relative)
    return compound is None or rule.action is not Verdict.ALLOW


def _split(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


@functools.lru_cache(maxsize=256)
def _compiled(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(patterns)


def _starts_with(words: list[str], prefix: list[str]) -> bool:
    return bool(prefix) and words[: len(prefix)] == prefix


def _relative_path(arguments: Mapping[str, Any], working_dir: Path) -> str | None:
    """The path argument resolved (symlinks too) and made relative to the working dir."""
    raw = next((arguments[k] for k in PATH_ARGUMENTS if isinstance(arguments.get(k), str)), None)
    if raw is None:
        return None
    root = working_dir.resolve()
    candidate = Path(raw).expanduser()
    resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if not resolved.is_relative_to(root):
        return None
    relative = resolved.relative_to(root).as_posix()
    return f"{relative}/" if resolved.is_dir() else relative


def headless(decision: Decision) -> Decision:
    """Without anyone to ask, an `ask` is a denial; the reason says how to allow it."""
    if decision.verdict is not Verdict.ASK:
        return decision
    return Decision(
        Verdict.DENY,
        f"this call needs approval ({decision.reason}) and nobody can approve it in a "
        "headless run; run with --mode auto or add an allow rule to allow such calls",
    )


def denied_result(tool_name: str, decision: Decision) -> ToolResult:
    """The error result the model sees for a call that was not allowed to run."""
    return ToolResult.error(f"Permission denied for {tool_name}: {decision.reason}.")
