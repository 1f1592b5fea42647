"""Permission modes, verdicts and rules as the user writes them in config.

Modes (goose's): `auto` runs everything, `approve` asks before every tool, `smart_approve`
asks only for tools not annotated read-only, `chat` offers no tools at all (the agent sends
none, and `decide` denies anything that still arrives).

Rules come from config as `<tool>` or `<tool>(<specifier>)`, each with an action. For the
shell tool the specifier is an argv prefix (`developer__shell(git diff)` matches `git diff
--stat`); for other tools it is a gitignore-style pattern matched on the resolved `path`
argument relative to the working dir (`developer__write(src/**)`). Tool names may use
globs (`git__*`).
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum


class PermissionMode(StrEnum):
    AUTO = "auto"
    APPROVE = "approve"
    SMART_APPROVE = "smart_approve"
    CHAT = "chat"


class Verdict(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


_MODE_ALIASES = {"smart": PermissionMode.SMART_APPROVE}
_RULE = re.compile(r"^\s*([A-Za-z0-9_*?\[\]-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)
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


def tool_matches(rule: PermissionRule, tool_name: str) -> bool:
    return fnmatch.fnmatchcase(tool_name, rule.tool)


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
