"""Permission modes, ordered rules (deny > ask > allow), file rules, headless.

Shell commands judged on the bash parse: tests/agent/test_shell_permissions.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gosling.agent.permissions import (
    DEFAULT_RULES,
    Decision,
    PermissionMode,
    PermissionRule,
    PermissionSettings,
    Verdict,
    decide,
    denied_result,
    headless,
    parse_mode,
    rules_from_lists,
)
from gosling.agent.tools import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only=True)
WRITES = ToolAnnotations(destructive=True)
SHELL = "developer__shell"


def verdict(
    tool: str,
    arguments: dict[str, Any],
    mode: PermissionMode,
    rules: tuple[PermissionRule, ...] = (),
    working_dir: Path = Path("/work/project"),
    annotations: ToolAnnotations | None = None,
) -> Verdict:
    return decide(tool, arguments, annotations, mode, rules, working_dir).verdict


# -- modes ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "annotations", "expected"),
    [
        (PermissionMode.AUTO, WRITES, Verdict.ALLOW),
        (PermissionMode.APPROVE, READ_ONLY, Verdict.ASK),
        (PermissionMode.SMART_APPROVE, READ_ONLY, Verdict.ALLOW),
        (PermissionMode.SMART_APPROVE, WRITES, Verdict.ASK),
        (PermissionMode.SMART_APPROVE, None, Verdict.ASK),
        (PermissionMode.CHAT, READ_ONLY, Verdict.DENY),
    ],
)
def test_modes_without_rules(
    mode: PermissionMode, annotations: ToolAnnotations | None, expected: Verdict
) -> None:
    assert verdict("developer__view", {"path": "a.py"}, mode, annotations=annotations) is expected


def test_modes_parse_with_a_helpful_error() -> None:
    assert parse_mode("smart-approve") is PermissionMode.SMART_APPROVE
    assert parse_mode("smart") is PermissionMode.SMART_APPROVE
    assert parse_mode("AUTO") is PermissionMode.AUTO
    with pytest.raises(ValueError, match="choose one of: auto, approve, smart_approve, chat"):
        parse_mode("yolo")


# -- rules ------------------------------------------------------------------------------------


def test_deny_beats_ask_beats_allow_whatever_the_order() -> None:
    rules = (
        PermissionRule.parse("allow", "developer__shell(git)"),
        PermissionRule.parse("ask", "developer__shell(git push)"),
        PermissionRule.parse("deny", "developer__shell(git push --force)"),
    )
    approve = PermissionMode.APPROVE
    assert verdict(SHELL, {"command": "git status"}, approve, rules) is Verdict.ALLOW
    assert verdict(SHELL, {"command": "git push origin main"}, approve, rules) is Verdict.ASK
    forced = decide(SHELL, {"command": "git push --force"}, None, approve, rules, Path("/w"))
    assert forced == Decision(
        Verdict.DENY, "rule 'deny developer__shell(git push --force)' (it runs git push --force)"
    )


def test_shell_rules_match_whole_argv_words() -> None:
    rules = (PermissionRule.parse("allow", "developer__shell(npm run test:*)"),)
    approve = PermissionMode.APPROVE
    assert rules[0].argv_prefix == ("npm", "run", "test")
    assert verdict(SHELL, {"command": "npm run test -- --watch"}, approve, rules) is Verdict.ALLOW
    assert verdict(SHELL, {"command": "npm run tests"}, approve, rules) is Verdict.ASK
    assert verdict(SHELL, {"command": "'npm' run test"}, approve, rules) is Verdict.ALLOW


def test_file_rules_match_gitignore_patterns_on_the_resolved_path(tmp_path: Path) -> None:
    (tmp_path / "src" / "deep").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "link").symlink_to(tmp_path / "src")
    rules = rules_from_lists(
        allow=["developer__write(src/**, *.md)"], deny=["developer__*(secrets/)"]
    )
    approve = PermissionMode.APPROVE

    def write(path: str) -> Verdict:
        return verdict("developer__write", {"path": path}, approve, rules, tmp_path)

    assert write("src/deep/a.py") is Verdict.ALLOW
    assert write("notes/todo.md") is Verdict.ALLOW
    assert write(str(tmp_path / "src" / "x.py")) is Verdict.ALLOW
    assert write("docs/link/x.py") is Verdict.ALLOW  # symlink resolved into src/
    assert write("lib/a.py") is Verdict.ASK
    assert write("./src/../lib/a.py") is Verdict.ASK
    assert write("secrets/key.txt") is Verdict.DENY
    view = verdict("developer__view", {"path": "secrets/a"}, PermissionMode.AUTO, rules, tmp_path)
    assert view is Verdict.DENY


def test_tool_globs_and_other_extensions() -> None:
    rules = rules_from_lists(deny=["git__git_push*"], allow=["git__*", "time__get_current_time"])
    approve = PermissionMode.APPROVE
    assert verdict("git__git_push", {}, approve, rules) is Verdict.DENY
    assert verdict("git__git_status", {"repo_path": "."}, approve, rules) is Verdict.ALLOW
    assert verdict("time__get_current_time", {}, approve, rules) is Verdict.ALLOW
    assert verdict("time__convert_time", {}, approve, rules) is Verdict.ASK


def test_default_rules_ask_before_touching_secrets(tmp_path: Path) -> None:
    rules = PermissionSettings().effective_rules()

    def check(tool: str, path: str) -> Verdict:
        return verdict(f"developer__{tool}", {"path": path}, PermissionMode.AUTO, rules, tmp_path)

    assert check("view", ".env") is Verdict.ASK
    assert check("edit", "certs/site.pem") is Verdict.ASK
    assert check("write", ".git/config") is Verdict.ASK
    assert check("view", "src/app.py") is Verdict.ALLOW
    assert PermissionSettings(default_rules=False).effective_rules() == ()
    assert len(DEFAULT_RULES) == 3


def test_bad_rules_are_reported_with_an_example() -> None:
    with pytest.raises(ValueError, match="for example 'developer__shell"):
        PermissionRule.parse("allow", "developer__shell(git status")
    with pytest.raises(ValueError):
        PermissionRule.parse("maybe", "developer__shell")


# -- headless ---------------------------------------------------------------------------------


def test_headless_turns_ask_into_a_denial_the_model_can_read() -> None:
    asked = decide(
        "developer__write", {"path": "a"}, WRITES, PermissionMode.APPROVE, (), Path("/w")
    )
    denied = headless(asked)
    assert denied.verdict is Verdict.DENY
    assert "approve mode" in denied.reason and "--mode auto" in denied.reason
    result = denied_result("developer__write", denied)
    assert result.is_error
    assert result.text_content().startswith("Permission denied for developer__write: this call")
    allowed = Decision(Verdict.ALLOW, "auto mode")
    assert headless(allowed) is allowed


def test_only_shell_tools_are_judged_as_shell_commands() -> None:
    # An MCP tool that happens to take a `command` argument is judged by its own rules.
    rules = rules_from_lists(allow=["ci__run"], deny=["shell(rm)"])
    run = {"command": "make test; make lint"}
    assert verdict("ci__run", run, PermissionMode.APPROVE, rules) is Verdict.ALLOW
    # A read-only tool is allowed in smart_approve whatever its `command` says.
    for name in ("docs__search", "tree"):
        found = verdict(
            name, {"command": "rm -rf x"}, PermissionMode.SMART_APPROVE, annotations=READ_ONLY
        )
        assert found is Verdict.ALLOW, name
    # A tool named plainly `shell` (goose's name) is a shell: its rules read the command.
    assert verdict("shell", {"command": "rm -rf x"}, PermissionMode.AUTO, rules) is Verdict.DENY


def test_a_directory_rule_matches_the_directory_itself_not_a_file_of_that_name(
    tmp_path: Path,
) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "notes").write_text("a file\n")
    rules = rules_from_lists(deny=["developer__view(logs/, notes/)"])
    view = "developer__view"
    assert verdict(view, {"path": "logs"}, PermissionMode.AUTO, rules, tmp_path) is Verdict.DENY
    assert verdict(view, {"path": "notes"}, PermissionMode.AUTO, rules, tmp_path) is Verdict.ALLOW
