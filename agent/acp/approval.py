"""Permissions through the editor: what "always allow" may remember, and the options offered.

gosling's own rules decide (`permissions.decide`); the editor is only asked where they say
ask. "Always" becomes one gosling allow rule, the narrowest the rule syntax can say for that
very call: the exact command for a shell call, the exact file (anchored, glob characters
escaped) for a file tool, the tool for one without a path. It is offered only when that
rule, added to the session's rules, really lets the same call through (an ask rule such as
the default one for `.env` files outranks any allow, and a compound shell line has no single
rule), so "always" never promises what gosling would not do, and never allows more than the
call the user saw.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gosling.agent.permissions import (
    PATH_ARGUMENTS,
    PermissionRule,
    PermissionSettings,
    Verdict,
    decide,
    is_shell_tool,
)
from gosling.agent.tools.base import ToolAnnotations

ALWAYS_KEY = "permissions.allow"
"""Extension data: the allow rules (gosling's syntax) granted with "always" in this session."""
ALLOW_ONCE = "allow_once"
ALLOW_ALWAYS = "allow_always"
REJECT = "reject_once"
_GLOB = re.compile(r"([*?\[\]\\])")


def always_rule(
    name: str,
    arguments: Mapping[str, Any],
    annotations: ToolAnnotations | None,
    permissions: PermissionSettings,
    working_dir: Path,
) -> str | None:
    """The rule text "always" would add for this call, or None when no rule can be that
    narrow or none would let it through."""
    text = _narrowest(name, arguments, working_dir)
    if text is None:
        return None
    rule = PermissionRule.parse(Verdict.ALLOW, text)
    if not _says_exactly(rule, name, arguments, working_dir):
        return None
    rules = (*permissions.effective_rules(), rule)
    decision = decide(name, arguments, annotations, permissions.mode, rules, working_dir)
    return text if decision.allowed else None


def granted_rules(texts: object) -> tuple[PermissionRule, ...]:
    """The stored "always" rules of a session (unreadable entries are skipped)."""
    if not isinstance(texts, list):
        return ()
    rules = []
    for text in texts:
        if isinstance(text, str):
            try:
                rules.append(PermissionRule.parse(Verdict.ALLOW, text))
            except ValueError:
                continue
    return tuple(rules)


def with_rules(
    permissions: PermissionSettings, rules: Sequence[PermissionRule]
) -> PermissionSettings:
    """`permissions` plus `rules` (each once)."""
    known = set(permissions.rules)
    added = tuple(r for r in rules if r not in known)
    if not added:
        return permissions
    return PermissionSettings(
        mode=permissions.mode,
        rules=(*permissions.rules, *added),
        default_rules=permissions.default_rules,
    )


def already_allowed(
    name: str,
    arguments: Mapping[str, Any],
    annotations: ToolAnnotations | None,
    permissions: PermissionSettings,
    granted: Sequence[PermissionRule],
    working_dir: Path,
) -> bool:
    """Whether a rule granted earlier in this turn lets the call through (the turn's tool
    runner still holds the rules it started with)."""
    if not granted:
        return False
    rules = (*permissions.effective_rules(), *granted)
    return decide(name, arguments, annotations, permissions.mode, rules, working_dir).allowed


def _narrowest(name: str, arguments: Mapping[str, Any], working_dir: Path) -> str | None:
    if is_shell_tool(name):
        command = arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return None
        try:
            words = shlex.split(command)
        except ValueError:
            return None
        return f"{name}({shlex.join(words)})" if words else None
    raw = next((arguments[k] for k in PATH_ARGUMENTS if isinstance(arguments.get(k), str)), None)
    if raw is None:
        return name
    relative = _relative(raw, working_dir)
    if relative is None or "," in relative or relative != relative.strip():
        return None
    pattern = "/" + _GLOB.sub(r"\\\1", relative)
    if pattern[1:2] in ("!", "#"):
        return None
    return f"{name}({pattern})"


def _says_exactly(
    rule: PermissionRule, name: str, arguments: Mapping[str, Any], working_dir: Path
) -> bool:
    """The parsed rule means what was meant: the whole command, or the one path."""
    if rule.tool != name:
        return False
    if is_shell_tool(name):
        return rule.argv_prefix == tuple(shlex.split(str(arguments.get("command"))))
    if rule.paths is None:
        return not any(isinstance(arguments.get(k), str) for k in PATH_ARGUMENTS)
    return len(rule.paths) == 1


def _relative(raw: str, working_dir: Path) -> str | None:
    root = working_dir.resolve()
    candidate = Path(raw).expanduser()
    resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if not resolved.is_relative_to(root) or resolved == root:
        return None
    return resolved.relative_to(root).as_posix()
