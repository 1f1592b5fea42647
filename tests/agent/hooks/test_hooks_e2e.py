"""Real hook scripts (bash and Python) through `gosling run`, against the fake model server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent.hooks.scripts import (
    DENY_RM_RF,
    LOG_EVENT,
    NO_FORCE_PUSH,
    REWRITE_INPUT,
    home,
    hook_toml,
    python_hook,
    read_log,
    user_config,
    write_script,
)
from tests.agent.test_run_e2e import LONG_TASK, SUMMARY_TEXT, gosling, gosling_env, run_args, tool
from tests.fakes import FakeLLMServer, FakeToolCall, FakeUsage, Turn


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    (work / ".git").mkdir(parents=True)
    (work / "hello.txt").write_text("hello\n")
    return work


@pytest.fixture
def scripts(tmp_path: Path) -> Path:
    directory = tmp_path / "hook-scripts"
    directory.mkdir()
    return directory


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def run_json(server: FakeLLMServer, repo: Path, prompt: str, *extra: str) -> dict[str, Any]:
    result = gosling(run_args(server, "anthropic", "--json", *extra, "-t", prompt), repo)
    assert result.stdout, result.stderr
    payload: dict[str, Any] = json.loads(result.stdout)
    payload["_stderr"] = result.stderr
    payload["_code"] = result.returncode
    return payload


def test_pre_tool_use_exit_2_blocks_the_command_and_the_model_sees_why(
    repo: Path, scripts: Path, server: FakeLLMServer
) -> None:
    hook = write_script(scripts, "no-force-push.sh", NO_FORCE_PUSH)
    user_config(home(), hook_toml("PreToolUse", str(hook), matcher="Bash"))
    server.add(
        tool("developer__shell", command="touch PUSHED && git push --force origin main"),
        Turn(text="Understood, I will not force push."),
    )
    payload = run_json(server, repo, "push my branch")
    assert payload["_code"] == 0, payload["_stderr"]
    assert not (repo / "PUSHED").exists()
    second = json.dumps(server.model_requests()[1].body)
    assert "Force pushes are not allowed here" in second
    decisions = payload["hook_decisions"]
    assert isinstance(decisions, list) and len(decisions) == 1
    assert decisions[0]["event"] == "PreToolUse" and decisions[0]["decision"] == "block"
    assert decisions[0]["tool_name"] == "developer__shell"
    assert decisions[0]["source"] == str(home() / "config" / "config.toml")


def test_a_claude_code_settings_file_json_deny_works_unchanged(
    repo: Path, scripts: Path, server: FakeLLMServer
) -> None:
    log = scripts / "payloads.jsonl"
    command = python_hook(scripts, "deny_rm.py", DENY_RM_RF.format(log=str(log)))
    settings = scripts / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "permissions": {"allow": []},
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
                    ],
                    "SubagentStop": [{"hooks": [{"type": "command", "command": "true"}]}],
                },
            }
        )
    )
    user_config(home(), f"hook_settings = [{json.dumps(str(settings))}]\n")
    server.add(
        Turn(
            tool_calls=[
                FakeToolCall("developer__shell", {"command": "rm -rf build"}),
                FakeToolCall("developer__shell", {"command": "echo kept > kept.txt"}),
            ]
        ),
        Turn(text="Removed nothing."),
    )
    (repo / "build").mkdir()
    payload = run_json(server, repo, "clean up")
    assert payload["_code"] == 0, payload["_stderr"]
    assert (repo / "build").is_dir() and (repo / "kept.txt").exists()
    second = json.dumps(server.model_requests()[1].body)
    assert "rm -rf is blocked by team policy" in second
    seen = read_log(log)
    commands = sorted(p["tool_input"]["command"] for p in seen)
    assert commands == ["echo kept > kept.txt", "rm -rf build"]
    first = next(p for p in seen if p["tool_input"]["command"] == "rm -rf build")
    assert first["hook_event_name"] == "PreToolUse" and first["tool_name"] == "Bash"
    assert first["cwd"] == str(repo.resolve()) and first["session_id"] == payload["session_id"]
    assert first["tool_use_id"] and first["permission_mode"] == "bypassPermissions"
    transcript = [
        json.loads(line) for line in Path(first["transcript_path"]).read_text().splitlines()
    ]
    assert transcript[0]["type"] == "user"
    assert transcript[0]["message"]["content"][0]["text"] == "clean up"
    assert any(b["type"] == "tool_use" for b in transcript[-1]["message"]["content"])
    decisions = [d["decision"] for d in payload["hook_decisions"]]
    assert sorted(decisions) == ["deny", "none"]


def _rewriting_hook(scripts: Path, rewrites: dict[str, dict[str, Any]]) -> str:
    """A PreToolUse hook answering `updatedInput` for the tool inputs (JSON) it knows."""
    text = REWRITE_INPUT.format(rewrites=rewrites)
    return python_hook(scripts, "rewrite.py", text)


def test_updated_input_changes_what_runs_and_the_model_is_told(
    repo: Path, scripts: Path, server: FakeLLMServer
) -> None:
    draft = json.dumps({"content": "draft\n", "file_path": str(repo / "draft.txt")}, sort_keys=True)
    bash = json.dumps({"command": "touch asked.txt"}, sort_keys=True)
    command = _rewriting_hook(
        scripts,
        {
            bash: {"command": "touch rewritten.txt"},
            draft: {"file_path": str(repo / "reviewed.txt"), "content": "reviewed\n"},
        },
    )
    user_config(home(), hook_toml("PreToolUse", command, matcher="Bash|Write"))
    server.add(
        tool("developer__shell", command="touch asked.txt"),
        tool("developer__write", path="draft.txt", content="draft\n"),
        Turn(text="Done."),
    )
    payload = run_json(server, repo, "make the files")
    assert payload["_code"] == 0, payload["_stderr"]
    assert (repo / "rewritten.txt").exists() and not (repo / "asked.txt").exists()
    assert (repo / "reviewed.txt").read_text() == "reviewed\n"
    assert not (repo / "draft.txt").exists()
    second = json.dumps(server.model_requests()[1].body)
    assert "A PreToolUse hook changed this call to" in second
    assert "touch rewritten.txt" in second


def test_updated_input_is_judged_by_the_deny_rules_as_it_will_run(
    repo: Path, scripts: Path, server: FakeLLMServer
) -> None:
    (repo / "build").mkdir()
    command = _rewriting_hook(
        scripts, {json.dumps({"command": "echo hi"}): {"command": "rm -rf build"}}
    )
    rules = '[permissions]\ndeny = ["developer__shell(rm)"]\n'
    user_config(home(), rules + hook_toml("PreToolUse", command, matcher="Bash"))
    server.add(tool("developer__shell", command="echo hi"), Turn(text="Fine."))
    payload = run_json(server, repo, "say hi")
    assert payload["_code"] == 0, payload["_stderr"]
    assert (repo / "build").is_dir()
    second = json.dumps(server.model_requests()[1].body)
    assert "Permission denied" in second
    assert "rm -rf build" in second  # the model learns what was refused: the rewritten call


def test_additional_context_reaches_the_model(
    repo: Path, scripts: Path, server: FakeLLMServer
) -> None:
    log = scripts / "log.jsonl"
    answers = {
        "UserPromptSubmit": {
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": "The release branch is frozen until Friday.",
            }
        },
        "PostToolUse": {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": "Remember to run make lint after edits.",
            }
        },
    }
    command = python_hook(scripts, "ctx.py", LOG_EVENT.format(log=str(log), answers=answers))
    user_config(
        home(),
        hook_toml("UserPromptSubmit", command) + hook_toml("PostToolUse", command, matcher="Write"),
    )
    server.add(
        tool("developer__write", path="notes.txt", content="draft\n"),
        Turn(text="Written."),
    )
    payload = run_json(server, repo, "write notes")
    assert payload["_code"] == 0, payload["_stderr"]
    first, second = (json.dumps(r.body) for r in server.model_requests())
    assert "The release branch is frozen until Friday." in first
    assert "Remember to run make lint after edits." in second
    post = next(p for p in read_log(log) if p["hook_event_name"] == "PostToolUse")
    assert post["tool_name"] == "Write"
    assert post["tool_input"] == {
        "file_path": str(repo.resolve() / "notes.txt"),
        "content": "draft\n",
    }
    assert post["tool_response"]["success"] is True


def test_user_prompt_submit_exit_2_refuses_the_prompt(
    repo: Path, scripts: Path, server: FakeLLMServer
) -> None:
    hook = write_script(
        scripts,
        "no-secrets.sh",
        "#!/usr/bin/env bash\n"
        "grep -q 'password' && { echo 'Prompts may not hold passwords.' >&2; exit 2; }\n"
        "exit 0\n",
    )
    user_config(home(), hook_toml("UserPromptSubmit", str(hook)))
    payload = run_json(server, repo, "my password is hunter2, log in")
    assert payload["_code"] == 1
    assert payload["stop_reason"] == "hook_blocked" and payload["is_error"] is True
    assert payload["error"] == "Prompts may not hold passwords."
    assert server.model_requests() == []


def test_pre_compact_instructions_reach_the_summarizer_and_post_compact_context_the_model(
    repo: Path, scripts: Path, server: FakeLLMServer
) -> None:
    log = scripts / "log.jsonl"
    answers = {
        "PreCompact": "Keep the ticket number TICKET-4242 in the summary.",
        "PostCompact": {
            "hookSpecificOutput": {
                "hookEventName": "PostCompact",
                "additionalContext": "Team rule: every change needs a test.",
            }
        },
    }
    command = python_hook(scripts, "compact.py", LOG_EVENT.format(log=str(log), answers=answers))
    user_config(
        home(),
        hook_toml("PreCompact", command, matcher="auto") + hook_toml("PostCompact", command),
    )
    server.add(
        Turn(
            tool_calls=[FakeToolCall("developer__shell", {"command": "echo step one"})],
            usage=FakeUsage(input_tokens=30_000, output_tokens=20),
        ),
        Turn(text=SUMMARY_TEXT),
        Turn(text="Done after compacting."),
    )
    env = gosling_env(GOSLING_AUTO_COMPACT_THRESHOLD="0.5")
    result = gosling(
        run_args(server, "anthropic", "--context-limit", "40000", "-t", LONG_TASK), repo, env=env
    )
    assert result.returncode == 0, result.stderr
    summarizer, final = server.model_requests()[1:]
    assert "Keep the ticket number TICKET-4242 in the summary." in json.dumps(summarizer.body)
    assert "Team rule: every change needs a test." in json.dumps(final.body)
    events = {p["hook_event_name"]: p for p in read_log(log)}
    assert events["PreCompact"]["trigger"] == "auto"
    assert "edit the greeting" in events["PostCompact"]["compact_summary"]


def test_pre_compact_exit_2_makes_the_compaction_wait(
    repo: Path, scripts: Path, server: FakeLLMServer
) -> None:
    hook = write_script(
        scripts, "wait.sh", "#!/bin/sh\necho 'Not now: a deploy is running.' >&2\nexit 2\n"
    )
    user_config(home(), hook_toml("PreCompact", str(hook)))
    server.add(
        Turn(
            tool_calls=[FakeToolCall("developer__shell", {"command": "echo one"})],
            usage=FakeUsage(input_tokens=30_000, output_tokens=20),
        ),
        Turn(text="Finished without compacting."),
    )
    env = gosling_env(GOSLING_AUTO_COMPACT_THRESHOLD="0.5")
    result = gosling(
        run_args(server, "anthropic", "--context-limit", "40000", "-t", "go"), repo, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Finished without compacting."
    assert "postponed the compaction: Not now: a deploy is running." in result.stderr
    assert len(server.model_requests()) == 2  # no summarizer call


def test_a_hanging_hook_times_out_is_reported_once_and_the_run_goes_on(
    repo: Path, scripts: Path, server: FakeLLMServer
) -> None:
    hook = write_script(scripts, "hang.sh", "#!/bin/sh\nsleep 300 &\nsleep 300\n")
    user_config(home(), hook_toml("PreToolUse", str(hook), timeout=1))
    server.add(
        tool("developer__shell", command="echo first > first.txt"),
        tool("developer__shell", command="echo second > second.txt"),
        Turn(text="Both ran."),
    )
    payload = run_json(server, repo, "run both")
    assert payload["_code"] == 0, payload["_stderr"]
    assert (repo / "first.txt").exists() and (repo / "second.txt").exists()
    assert str(payload["_stderr"]).count("timed out") == 1
    decisions = payload["hook_decisions"]
    assert [d["decision"] for d in decisions] == ["error", "error"]


def test_a_failing_hook_is_reported_once(repo: Path, scripts: Path, server: FakeLLMServer) -> None:
    user_config(home(), hook_toml("PostToolUse", "echo broken >&2; exit 1"))
    server.add(
        tool("developer__shell", command="echo a"),
        tool("developer__shell", command="echo b"),
        Turn(text="ok"),
    )
    result = gosling(run_args(server, "anthropic", "-t", "go"), repo)
    assert result.returncode == 0, result.stderr
    assert (
        result.stderr.count("PostToolUse hook `echo broken >&2; exit 1` failed (exit 1: broken)")
        == 1
    )


def test_stop_hook_keeps_the_model_going_once(
    repo: Path, scripts: Path, server: FakeLLMServer
) -> None:
    stop = python_hook(
        scripts,
        "stop.py",
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        "if not data['stop_hook_active']:\n"
        "    answer = {'decision': 'block', 'reason': 'Run the tests before you stop.'}\n"
        "    print(json.dumps(answer))\n",
    )
    user_config(home(), hook_toml("Stop", stop))
    server.add(Turn(text="Done."), Turn(text="Tests pass. Done."))
    payload = run_json(server, repo, "fix it")
    assert payload["_code"] == 0, payload["_stderr"]
    assert payload["result"] == "Tests pass. Done."
    assert "Run the tests before you stop." in json.dumps(server.model_requests()[1].body)


def test_every_event_runs_a_hook(repo: Path, scripts: Path, server: FakeLLMServer) -> None:
    log = scripts / "events.jsonl"
    command = python_hook(scripts, "log.py", LOG_EVENT.format(log=str(log), answers={}))
    events = [
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
        "PreCompact", "PostCompact", "SessionEnd", "Notification",
    ]  # fmt: skip
    user_config(home(), "".join(hook_toml(event, command) for event in events))
    server.add(
        Turn(
            tool_calls=[FakeToolCall("developer__view", {"path": "hello.txt"})],
            usage=FakeUsage(input_tokens=30_000, output_tokens=20),
        ),
        Turn(text=SUMMARY_TEXT),
        tool("developer__shell", command="touch needs-approval"),
        Turn(text="All done."),
    )
    env = gosling_env(GOSLING_AUTO_COMPACT_THRESHOLD="0.5")
    args = run_args(server, "anthropic", "--context-limit", "40000", "--mode", "smart_approve")
    result = gosling([*args, "-t", "look around"], repo, env=env)
    assert result.returncode == 4, result.stderr  # the shell call needed an approval
    seen = read_log(log)
    names = [p["hook_event_name"] for p in seen]
    assert set(names) == set(events), names
    assert names[0] == "SessionStart" and names[-1] == "SessionEnd"
    by_name = {p["hook_event_name"]: p for p in reversed(seen)}  # the first of each
    assert by_name["SessionStart"]["source"] == "startup"
    assert by_name["UserPromptSubmit"]["prompt"] == "look around"
    assert by_name["Notification"]["notification_type"] == "permission_prompt"
    assert by_name["SessionEnd"]["reason"] == "other"
    assert {p["source"] for p in seen if p["hook_event_name"] == "SessionStart"} == {
        "startup",
        "compact",
    }
    assert len({p["session_id"] for p in seen}) == 1


def test_an_untrusted_projects_hooks_never_run(
    repo: Path, scripts: Path, server: FakeLLMServer
) -> None:
    marker = scripts / "PROJECT_HOOK_RAN"
    (repo / ".gosling").mkdir()
    (repo / ".gosling" / "config.toml").write_text(
        hook_toml("UserPromptSubmit", f"touch {marker}")
        + hook_toml("PreToolUse", f"touch {marker}")
    )
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "SessionStart": [{"hooks": [{"type": "command", "command": f"touch {marker}"}]}]
                }
            }
        )
    )
    user_config(home(), 'hook_settings = [".claude/settings.json"]\n')
    server.add(tool("developer__shell", command="echo hi"), Turn(text="hi"))
    result = gosling(run_args(server, "anthropic", "-t", "say hi"), repo)
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    assert "ignored hooks from untrusted" in result.stderr
    assert "ignored the hooks of untrusted" in result.stderr
    listed = gosling(["hooks"], repo)
    assert "No hooks configured." in listed.stdout
    assert "are not run; to run them: gosling trust" in listed.stderr
    trusted = gosling(["trust", str(repo)], repo, stdin="y\n")
    assert trusted.returncode == 0, trusted.stderr
    server.add(Turn(text="hi again"))
    again = gosling(run_args(server, "anthropic", "-t", "say hi"), repo)
    assert again.returncode == 0, again.stderr
    assert marker.exists()


def test_gosling_hooks_lists_what_runs_and_where_it_came_from(repo: Path, scripts: Path) -> None:
    settings = scripts / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "hooks": {
                    "PostToolUse": [
                        {
                            "matcher": "Edit|Write",
                            "hooks": [{"type": "command", "command": "fmt.sh"}],
                        }
                    ],
                    "SubagentStop": [{"hooks": [{"type": "command", "command": "true"}]}],
                    "Stop": [{"hooks": [{"type": "prompt", "prompt": "done?"}]}],
                }
            }
        )
    )
    config = user_config(
        home(),
        f"hook_settings = [{json.dumps(str(settings))}]\n"
        + hook_toml("PreToolUse", "guard.sh", matcher="Bash", timeout=5),
    )
    listed = gosling(["hooks", "--json"], repo)
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert [
        (h["event"], h["matcher"], h["command"], h["timeout"], h["source"]) for h in data["hooks"]
    ] == [
        ("PreToolUse", "Bash", "guard.sh", 5.0, str(config)),
        ("PostToolUse", "Edit|Write", "fmt.sh", 60.0, str(settings)),
    ]
    assert {s["event"] for s in data["skipped"]} == {"SubagentStop", "Stop"}
    text = gosling(["hooks"], repo)
    assert "PreToolUse:\n  [Bash] guard.sh  (timeout 5s)\n      from " + str(config) in text.stdout
    assert "Not run by gosling:" in text.stdout


def test_a_bad_hook_config_is_one_clear_error(repo: Path) -> None:
    user_config(home(), hook_toml("PreToolUze", "x"))
    result = gosling(["hooks"], repo)
    assert result.returncode != 0
    assert "unknown hook event 'PreToolUze'; did you mean 'PreToolUse'?" in result.stderr
