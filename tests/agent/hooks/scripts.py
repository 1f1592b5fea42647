"""Hook scripts for the e2e tests, written the way users write them for Claude Code."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

NO_FORCE_PUSH = """#!/usr/bin/env bash
# A Claude Code PreToolUse hook: refuse force pushes (exit 2, the reason on stderr).
input=$(cat)
if printf '%s' "$input" | grep -q 'push --force'; then
  echo "Force pushes are not allowed here; push without --force." >&2
  exit 2
fi
exit 0
"""

DENY_RM_RF = """import json, sys
# A Claude Code PreToolUse hook: JSON deny for rm -rf, allow everything else.
data = json.load(sys.stdin)
with open({log!r}, "a") as log:
    log.write(json.dumps(data) + "\\n")
command = data.get("tool_input", {{}}).get("command", "")
if data["tool_name"] == "Bash" and "rm -rf" in command:
    print(json.dumps({{"hookSpecificOutput": {{
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "rm -rf is blocked by team policy",
    }}}}))
sys.exit(0)
"""

LOG_EVENT = """import json, sys
# Records every payload; answers with context where an event takes it.
data = json.load(sys.stdin)
with open({log!r}, "a") as log:
    log.write(json.dumps(data) + "\\n")
answers = {answers!r}
answer = answers.get(data["hook_event_name"])
if answer is not None:
    print(answer if isinstance(answer, str) else json.dumps(answer))
"""


REWRITE_INPUT = """import json, sys
# A Claude Code PreToolUse hook that rewrites the call (hookSpecificOutput.updatedInput).
data = json.load(sys.stdin)
rewrites = {rewrites!r}
new = rewrites.get(json.dumps(data["tool_input"], sort_keys=True))
if new is not None:
    print(json.dumps({{"hookSpecificOutput": {{
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": new,
    }}}}))
"""


def write_script(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def python_hook(directory: Path, name: str, text: str) -> str:
    """The command line of a Python hook script."""
    path = write_script(directory, name, text)
    return f"{sys.executable} {path}"


def user_config(home: Path, text: str) -> Path:
    path = home / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def hook_toml(event: str, command: str, *, matcher: str = "", timeout: float | None = None) -> str:
    lines = [f"[[hooks.{event}]]"]
    if matcher:
        lines.append(f"matcher = {json.dumps(matcher)}")
    lines += [f"[[hooks.{event}.hooks]]", 'type = "command"', f"command = {json.dumps(command)}"]
    if timeout is not None:
        lines.append(f"timeout = {timeout}")
    return "\n".join(lines) + "\n"


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def home() -> Path:
    return Path(os.environ["GOSLING_HOME"])
