"""One pure `decide` for every tool call, and what a headless run does with an `ask`.

Precedence is deny > ask > allow whatever the order of the rules; within a level the first
matching rule gives the reason; when no rule decides, the mode does. Shell commands are
judged twice: deny and ask rules on a bash parse of everything the line would run
(`shell_parse`, `shell_verdict`), allow rules and `smart_approve` only inside a closed
grammar (`shell_allow`), so that an allow rule vouches only for what it names. File tools
are matched on their resolved path.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pathspec

from gosling.agent.permissions.rules import (
    PATH_ARGUMENTS,
    Decision,
    PermissionMode,
    PermissionRule,
    Verdict,
    is_shell_tool,
    tool_matches,
)
from gosling.agent.tools.base import ToolAnnotations, ToolResult


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
    command = arguments.get("command")
    if is_shell_tool(tool_name) and isinstance(command, str):
        return _decide_shell(tool_name, command, annotations, mode, rules, working_dir)
    matched = [r for r in rules if _matches(r, tool_name, arguments, working_dir)]
    for verdict in (Verdict.DENY, Verdict.ASK, Verdict.ALLOW):
        hit = next((r for r in matched if r.action is verdict), None)
        if hit is not None:
            return Decision(verdict, f"rule '{hit.describe()}'")
    return _by_mode(mode, annotations)


def _decide_shell(
    tool_name: str,
    command: str,
    annotations: ToolAnnotations | None,
    mode: PermissionMode,
    rules: Sequence[PermissionRule],
    working_dir: Path,
) -> Decision:
    from gosling.agent.permissions.shell_allow import approve_line
    from gosling.agent.permissions.shell_parse import analyse
    from gosling.agent.permissions.shell_verdict import shell_allow_rules, shell_verdict

    analysis = analyse(command)
    decided = shell_verdict(tool_name, analysis, rules)
    if decided is not None:
        return decided
    allows = shell_allow_rules(tool_name, rules)
    bare = next((r for r in allows if r.argv_prefix is None), None)
    if bare is not None and not analysis.unknowns and not analysis.effects:
        return Decision(Verdict.ALLOW, f"rule '{bare.describe()}'")
    if mode is PermissionMode.AUTO:
        return Decision(Verdict.ALLOW, "auto mode")
    smart = mode is PermissionMode.SMART_APPROVE
    approval = approve_line(command, allows, smart=smart, working_dir=working_dir)
    if approval.allowed and (allows or smart):
        return Decision(Verdict.ALLOW, approval.reason)
    if not approval.allowed:
        return Decision(Verdict.ASK, f"{mode.value} mode; {approval.reason}")
    return Decision(Verdict.ASK, f"{mode.value} mode")


def _by_mode(mode: PermissionMode, annotations: ToolAnnotations | None) -> Decision:
    if mode is PermissionMode.AUTO:
        return Decision(Verdict.ALLOW, "auto mode")
    if mode is PermissionMode.SMART_APPROVE and annotations is not None and annotations.read_only:
        return Decision(Verdict.ALLOW, "read-only tool (smart_approve mode)")
    return Decision(Verdict.ASK, f"{mode.value} mode")


def _matches(
    rule: PermissionRule, tool_name: str, arguments: Mapping[str, Any], working_dir: Path
) -> bool:
    if not tool_matches(rule, tool_name) or rule.argv_prefix is not None:
        return False
    if rule.paths is not None:
        relative = _relative_path(arguments, working_dir)
        return relative is not None and _compiled(rule.paths).match_file(relative)
    return True


@functools.lru_cache(maxsize=256)
def _compiled(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(patterns)


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
