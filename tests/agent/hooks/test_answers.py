"""What a hook's exit code and output mean, and which tools a matcher names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gosling.agent.hooks.answers import interpret
from gosling.agent.hooks.process import HookRun
from gosling.agent.hooks.tools import arguments_from_hook, matches, names_of, tool_fields


def ran(code: int | None, out: str = "", err: str = "", *, timed_out: bool = False) -> HookRun:
    return HookRun(code, out, err, 5, timed_out=timed_out)


@pytest.mark.parametrize(
    ("matcher", "tool", "hit"),
    [
        ("Bash", "developer__shell", True),
        ("developer__shell", "developer__shell", True),
        ("Edit|Write", "developer__write", True),
        ("Edit|Write", "developer__view", False),
        ("", "anything__at_all", True),
        ("*", "developer__view", True),
        ("mcp__git__.*", "git__git_status", True),
        ("Bas", "developer__shell", False),
        ("Notebook.*", "developer__shell", False),
    ],
)
def test_matchers_know_gosling_and_claude_code_names(matcher: str, tool: str, hit: bool) -> None:
    assert matches(matcher, names_of(tool)) is hit


def test_tool_input_is_in_claude_codes_shape_with_absolute_paths(tmp_path: Path) -> None:
    fields = tool_fields("developer__edit", {"path": "a.py", "old": "x", "new": "y"}, tmp_path)
    assert fields["tool_name"] == "Edit"
    assert fields["tool_input"] == {
        "file_path": str(tmp_path / "a.py"),
        "old_string": "x",
        "new_string": "y",
        "replace_all": False,
    }
    assert fields["gosling_tool_input"] == {"path": "a.py", "old": "x", "new": "y"}


def test_updated_input_in_claude_codes_shape_becomes_goslings_arguments(tmp_path: Path) -> None:
    edit = {"path": "a.py", "old": "x", "new": "y"}
    changed = {"file_path": str(tmp_path / "b.py"), "new_string": "z"}
    assert arguments_from_hook("developer__edit", changed, edit, tmp_path) == {
        "path": "b.py",
        "old": "x",
        "new": "z",
    }
    read = arguments_from_hook(
        "developer__view", {"offset": 3, "limit": 2}, {"path": "a"}, tmp_path
    )
    assert read == {"path": "a", "view_range": [3, 4]}
    shell = arguments_from_hook("developer__shell", {"timeout": 1500}, {"command": "ls"}, tmp_path)
    assert shell == {"command": "ls", "timeout_secs": 1.5}
    outside = arguments_from_hook(
        "developer__write", {"file_path": "/etc/x"}, {"path": "a"}, tmp_path
    )
    assert outside["path"] == "/etc/x"  # the write tool's own containment still judges it
    mcp = arguments_from_hook("git__git_status", {"repo_path": "/r"}, {"repo_path": "."}, tmp_path)
    assert mcp == {"repo_path": "/r"}
    answer = {"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"a": 1}}}
    assert interpret("PreToolUse", ran(0, json.dumps(answer))).updated_input == {"a": 1}
    assert interpret("PostToolUse", ran(0, json.dumps(answer))).updated_input is None


def test_exit_2_blocks_with_stderr_and_other_codes_fail() -> None:
    assert interpret("PreToolUse", ran(2, err="no\n")).decision == "block"
    assert interpret("PreToolUse", ran(2, err="no\n")).reason == "no"
    failed = interpret("PostToolUse", ran(1, err="boom\nmore"))
    assert (failed.decision, failed.error) == ("error", "exit 1: boom")
    assert interpret("Stop", ran(None, timed_out=True)).decision == "error"


def test_json_answers() -> None:
    deny = {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "r"}}
    answer = interpret("PreToolUse", ran(0, json.dumps(deny)))
    assert (answer.decision, answer.reason) == ("deny", "r")
    legacy = interpret("PreToolUse", ran(0, json.dumps({"decision": "approve"})))
    assert legacy.decision == "allow"
    stop = interpret("PostToolUse", ran(0, json.dumps({"continue": False, "stopReason": "s"})))
    assert (stop.decision, stop.stop_reason) == ("stop", "s")
    nested = "{" * 10_000 + "}" * 10_000
    assert interpret("PreToolUse", ran(0, nested)).decision == "none"


def test_plain_stdout_is_context_only_where_claude_code_makes_it_context() -> None:
    assert interpret("UserPromptSubmit", ran(0, "rules\n")).context == "rules"
    assert interpret("PreCompact", ran(0, "keep X")).context == "keep X"
    assert interpret("PreToolUse", ran(0, "chatter")).decision == "none"
    long = interpret("SessionStart", ran(0, "x" * 20_000)).context
    assert len(long) < 10_100 and long.endswith("[hook output cut at 10000 characters]")


async def test_hook_output_is_redacted_and_a_hung_group_is_killed(tmp_path: Path) -> None:
    from gosling.agent.hooks.process import run_hook

    key = "sk-ant-api03-" + "A1b2C3d4" * 6
    run = await run_hook(
        f"cat > /dev/null; echo 'leaked {key}' >&2; exit 2",
        b'{"hook_event_name": "PreToolUse"}',
        cwd=tmp_path,
        project_dir=tmp_path,
        timeout=30,
    )
    assert run.exit_code == 2 and key not in run.stderr and "[REDACTED" in run.stderr
    pid_file = tmp_path / "child.pid"
    hung = await run_hook(
        f"sleep 60 & echo $! > {pid_file}; wait",
        b"{}",
        cwd=tmp_path,
        project_dir=tmp_path,
        timeout=0.5,
    )
    assert hung.timed_out and hung.exit_code is None
    assert _dead(pid_file.read_text().strip())


def _dead(pid: str) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except FileNotFoundError:
        return True
