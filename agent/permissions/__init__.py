"""Whether a tool call may run: modes, rules (deny > ask > allow) and one pure `decide`.

| module | owns |
|---|---|
| `rules.py` | `PermissionMode`, `Verdict`, `Decision`, `PermissionRule` and its config syntax |
| `decide.py` | `decide` (rules, then the mode), `headless`, `denied_result` |
| `shell_grammar.py` | the closed grammar allow rules may approve (tokens re-checked byte by byte) |
| `shell_allow.py` | allow rules and `smart_approve` judged on that grammar (`approve_line`) |
| `shell_policies.py` | per-program argument policies of the read-only programs (data) |
| `shell_policy_check.py` | one argv checked against its policy |
| `shell_parse.py` | a shell command parsed with tree-sitter-bash into `ShellAnalysis` (deny/ask) |
| `shell_words.py` | one bash word's static value (quotes and escapes removed) |
| `shell_wrappers.py` | wrappers seen through, code strings parsed again, names rebound |
| `shell_wrapper_specs.py` | the wrappers' options and how each runs its command (data) |
| `shell_model.py` | `Invocation` and `ShellAnalysis` |
| `shell_verdict.py` | deny and ask shell rules judged against every invocation |

The tree-sitter parser is imported on the first shell decision, never at import time.
"""

from __future__ import annotations

from gosling.agent.permissions.decide import decide, denied_result, headless
from gosling.agent.permissions.rules import (
    DEFAULT_RULES,
    PATH_ARGUMENTS,
    Decision,
    PermissionMode,
    PermissionRule,
    PermissionSettings,
    Verdict,
    is_shell_tool,
    parse_mode,
    rules_from_lists,
)

__all__ = [
    "DEFAULT_RULES",
    "PATH_ARGUMENTS",
    "Decision",
    "PermissionMode",
    "PermissionRule",
    "PermissionSettings",
    "Verdict",
    "decide",
    "denied_result",
    "headless",
    "is_shell_tool",
    "parse_mode",
    "rules_from_lists",
]
