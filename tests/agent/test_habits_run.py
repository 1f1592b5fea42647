"""Habits of Claude Code, Codex and goose users in scripts (issue 31), each through a real
`gosling` subprocess against the fake model server."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gosling.sessions import SqliteSessionStore
from tests.agent.claude_code_result import check_claude_code_result
from tests.agent.test_run_e2e import gosling, gosling_env, run_args, tool
from tests.fakes import FakeLLMServer, FakeUsage, Fault, Turn


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    (work / ".git").mkdir(parents=True)
    (work / "hello.txt").write_text("hello world\n")
    return work


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def _sessions() -> list[tuple[str, str]]:
    store = SqliteSessionStore.open_default(Path(os.environ["GOSLING_HOME"]) / "data")
    try:
        return [(s.id, s.name) for s in store.list_sessions()]
    finally:
        store.close()


def _user_text(server: FakeLLMServer, index: int = -1) -> str:
    messages = server.model_requests()[index].body["messages"]
    content = messages[-1]["content"]
    text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
    return text.split("<turn-context>")[0]  # gosling's own note on each turn comes after


# 1 -------------------------------------------------------------------------------------------


def test_piped_content_goes_after_the_prompt_in_a_fence_cut_like_a_tool_result(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(Turn(text="It prints."), Turn(text="Long."))
    code = "def main():\n    print('```')\n"
    result = gosling(run_args(server, "anthropic", "explain this code"), repo, stdin=code)
    assert result.returncode == 0, result.stderr
    sent = _user_text(server)
    assert sent.startswith("explain this code\n\n````\n")  # a fence longer than the ``` inside
    assert "print('```')" in sent and sent.rstrip().endswith("````")

    log = "".join(f"line {n}\n" for n in range(5000))
    result = gosling(run_args(server, "anthropic", "-p", "why did this fail"), repo, stdin=log)
    assert result.returncode == 0, result.stderr
    sent = _user_text(server)
    assert sent.startswith("why did this fail") and "line 0\n" in sent
    assert "line 4999" not in sent and "[stdin cut: the first 2000 of 5000 lines" in sent


# 2 -------------------------------------------------------------------------------------------


def test_resume_without_an_id_takes_the_words_as_the_prompt_and_says_which_session(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(Turn(text="The answer is 42."), Turn(text="Going on."))
    assert gosling(run_args(server, "anthropic", "first question"), repo).returncode == 0
    ((session_id, _),) = _sessions()
    result = gosling(run_args(server, "anthropic", "-r", "keep going"), repo)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Going on.\n"
    assert _user_text(server) == "keep going"
    assert "The answer is 42." in json.dumps(server.model_requests()[-1].body)
    assert f"resuming the latest session here, {session_id}" in result.stderr
    assert len(_sessions()) == 1


# 3 -------------------------------------------------------------------------------------------


def test_json_results_carry_claude_codes_fields_for_success_max_turns_denial_and_config_error(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(
        Turn(
            text="Done.",
            usage=FakeUsage(input_tokens=6_000, output_tokens=1_000, cache_read_tokens=4_000),
        )
    )
    ok = gosling(run_args(server, "anthropic", "--output-format", "json", "x"), repo)
    server.add(tool("developer__shell", command="echo 1"))
    max_turns = gosling(run_args(server, "anthropic", "--json", "--max-turns", "1", "x"), repo)
    server.add(tool("developer__shell", command="touch made"), Turn(text="I could not."))
    refused = gosling(run_args(server, "anthropic", "--json", "--mode", "approve", "x"), repo)
    config = Path(gosling(["config", "path"], repo).stdout.strip())
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("max_turns = 0\n")
    broken = gosling(run_args(server, "anthropic", "--json", "x"), repo)
    config.unlink()

    payloads = {}
    for name, run, code in (
        ("ok", ok, 0),
        ("max_turns", max_turns, 3),
        ("refused", refused, 4),
        ("config", broken, 2),
    ):
        assert run.returncode == code, (name, run.stderr)
        payloads[name] = json.loads(run.stdout)  # exactly one object on stdout
        assert check_claude_code_result(payloads[name]) == [], name
    assert payloads["ok"]["subtype"] == "success" and payloads["ok"]["result"] == "Done."
    assert payloads["ok"]["usage"] == {
        "input_tokens": 6_000,  # the uncached part only, as Claude Code counts it
        "output_tokens": 1_000,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 4_000,
    }
    assert payloads["max_turns"]["subtype"] == "error_max_turns"
    assert payloads["max_turns"]["is_error"] is True
    (denial,) = payloads["refused"]["permission_denials"]
    assert denial["tool_name"] == "developer__shell"
    assert denial["tool_input"] == {"command": "touch made"} and denial["tool_use_id"]
    assert payloads["refused"]["subtype"] == "success" and not (repo / "made").exists()
    assert payloads["config"]["is_error"] is True
    assert "max_turns = 0 is out of range" in payloads["config"]["error"]


def test_stream_json_ends_with_the_same_result_object_and_a_usage_error_too(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(tool("developer__shell", command="echo hi"), Turn(text="Said hi."))
    streamed = gosling(run_args(server, "openai", "--output-format", "stream-json", "x"), repo)
    assert streamed.returncode == 0, streamed.stderr
    last = json.loads(streamed.stdout.splitlines()[-1])
    assert check_claude_code_result(last) == [] and last["result"] == "Said hi."
    assert last["num_turns"] == 2 and 0 < last["duration_api_ms"] <= last["duration_ms"]

    bad_flag = gosling(run_args(server, "anthropic", "--json", "--max-turns", "0", "x"), repo)
    assert bad_flag.returncode == 2
    payload = json.loads(bad_flag.stdout)
    assert check_claude_code_result(payload) == [] and "--max-turns" in payload["error"]


# 4, 5, 7 -------------------------------------------------------------------------------------


def test_a_missing_working_dir_is_one_error_not_a_traceback(repo: Path) -> None:
    result = gosling(["run", "--working-dir", str(repo / "nope"), "x"], repo)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(f"error: --working-dir {repo / 'nope'} does not exist")


def test_a_model_goes_to_its_own_vendor_and_never_to_the_other_ones_api(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(Turn(text="From OpenAI."))
    env = gosling_env(ANTHROPIC_BASE_URL=server.url, OPENAI_BASE_URL=server.openai_url)
    result = gosling(["run", "--model", "gpt-5", "x"], repo, env=env)
    assert result.returncode == 0, result.stderr
    assert [r.path for r in server.model_requests()] == ["/v1/chat/completions"]

    named = gosling(["run", "--provider", "anthropic", "--model", "gpt-5", "x"], repo, env=env)
    assert named.returncode == 2 and len(server.model_requests()) == 1
    assert "anthropic serves claude-* models, not 'gpt-5'" in named.stderr
    assert "--provider openai --model gpt-5" in named.stderr


def test_no_provider_exits_2_with_the_same_error_style_from_run(repo: Path) -> None:
    env = {k: v for k, v in gosling_env().items() if not k.endswith("_API_KEY")}
    env["OLLAMA_HOST"] = "127.0.0.1:9"  # nothing listens there
    result = gosling(["run", "x"], repo, env=env)
    assert result.returncode == 2
    assert result.stderr.startswith("error: no model provider found")


# 8 -------------------------------------------------------------------------------------------


def test_tool_progress_counts_the_tools_own_lines_and_says_why_one_failed(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(
        tool("developer__shell", command="echo one"),
        tool("developer__shell", command="ls no-such-file"),
        tool("developer__view", path="missing.txt"),
        Turn(text="Done."),
    )
    result = gosling(run_args(server, "anthropic", "x"), repo)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert "  ✓ developer__shell: 1 line" in lines
    failed = next(line for line in lines if line.startswith("  ✗ developer__shell:"))
    assert failed.startswith("  ✗ developer__shell: exit 2: ls: cannot access")
    view = next(line for line in lines if line.startswith("  ✗ developer__view:"))
    assert "missing.txt" in view and "line" not in view


# 10 ------------------------------------------------------------------------------------------


def test_other_clis_spellings_work_or_say_what_gosling_calls_them(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(Turn(text="printed"), Turn(text="exec'd"))
    sub = repo / "sub"
    sub.mkdir()
    printed = gosling(
        ["-p", "--provider", "anthropic", "-m", "test-model", "--base-url", server.url, "q"],
        repo,
    )
    assert (printed.returncode, printed.stdout) == (0, "printed\n"), printed.stderr
    execd = gosling(
        [
            *("exec", "--provider", "anthropic", "-m", "test-model", "--base-url", server.url),
            *("-C", str(sub), "--permission-mode", "acceptEdits", "q"),
        ],
        repo,
    )
    assert (execd.returncode, execd.stdout) == (0, "exec'd\n"), execd.stderr
    server.add(tool("developer__shell", command="touch ran"), Turn(text="ran"))
    bypass = gosling(
        run_args(server, "anthropic", "--mode", "approve", "--dangerously-skip-permissions", "q"),
        repo,
    )
    assert bypass.returncode == 2 and "give one" in bypass.stderr
    full_auto = gosling(
        run_args(server, "anthropic", "--full-auto", "--verbose", "q"),
        repo,
        env=gosling_env(GOSLING_MODE="approve"),
    )
    assert full_auto.returncode == 0 and (repo / "ran").exists(), full_auto.stderr

    for args in (["-v"], ["-V"], ["version"]):
        shown = gosling(args, repo)
        assert shown.returncode == 0 and "gosling, version" in shown.stdout
    for args in (["run", "-h"], ["sessions", "list", "-h"], ["config", "-h"]):
        assert gosling(args, repo).stdout.startswith("Usage: gosling")
    add_dir = gosling(["run", "--add-dir", "x", "q"], repo)
    assert add_dir.returncode == 2
    assert "gosling has no --add-dir: tools work in the working directory (-C/" in add_dir.stderr
    verbose = gosling(["--verbos"], repo)
    assert ".;" not in verbose.stderr
    mistyped = gosling(["sesion"], repo)
    assert "did you mean 'session'" in mistyped.stderr


# 11 ------------------------------------------------------------------------------------------


def test_config_set_writes_checked_values_and_load_refuses_out_of_range_ones(
    repo: Path, server: FakeLLMServer
) -> None:
    config = Path(gosling(["config", "path"], repo).stdout.strip())
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("# my settings\nmax_retries = 1\n")
    wrote = gosling(["config", "set", "max_turns", "7"], repo)
    assert wrote.returncode == 0, wrote.stderr
    assert config.read_text() == "# my settings\nmax_retries = 1\nmax_turns = 7\n"
    refused = gosling(["config", "set", "auto_compact_threshold", "5"], repo)
    assert refused.returncode == 2
    assert "auto_compact_threshold = 5 is out of range; it must be between 0 and 1" in (
        refused.stderr
    )
    typo = gosling(["config", "set", "max_turn", "7"], repo)
    assert typo.returncode == 2 and "did you mean 'max_turns'" in typo.stderr
    assert "auto_compact" not in config.read_text()

    config.write_text("auto_compact_threshold = 5\n")
    server.add(Turn(text="never"))
    loaded = gosling(run_args(server, "anthropic", "x"), repo)
    assert loaded.returncode == 2 and server.model_requests() == []
    assert f"{config}: auto_compact_threshold = 5 is out of range" in loaded.stderr
    unset = gosling(["config", "unset", "auto_compact_threshold"], repo)
    assert unset.returncode == 0 and config.read_text().strip() == ""


# 12 ------------------------------------------------------------------------------------------


def test_a_failed_one_off_run_leaves_no_session_and_the_list_fits_80_columns(
    repo: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    server.add(Turn(fault=Fault.auth()))
    failed = gosling(run_args(server, "anthropic", "--json", "x"), repo)
    assert failed.returncode == 1 and json.loads(failed.stdout)["session_id"] is None
    assert _sessions() == []

    deep = tmp_path / "a-rather-long-directory-name" / "with" / "several" / "levels" / "proj"
    (deep / ".git").mkdir(parents=True)
    server.add(Turn(text="ok"))
    name = "Refactor the payment module so retries back off"
    assert gosling(run_args(server, "anthropic", name), deep).returncode == 0
    listed = gosling(["sessions", "list"], repo, env=gosling_env(COLUMNS="80"))
    rows = listed.stdout.splitlines()
    assert len(rows) == 2, listed.stdout  # the header and one row: nothing wrapped
    assert all(len(row) <= 80 for row in rows)
    assert rows[1].rstrip().endswith("/levels/proj")


# 14 ------------------------------------------------------------------------------------------


def test_small_exits_and_messages(repo: Path, server: FakeLLMServer) -> None:
    (repo / "notes.txt").write_text("just some notes\n")
    replay = gosling(["context", "replay", str(repo / "notes.txt")], repo)
    assert replay.returncode == 2 and replay.stderr.startswith("error:")

    server.add(Turn(text="kept"))
    assert gosling(run_args(server, "anthropic", "x"), repo).returncode == 0
    ((session_id, _),) = _sessions()
    rm = gosling(["sessions", "rm", session_id], repo, stdin="")
    assert rm.returncode == 2 and f"gosling sessions rm -y {session_id}" in rm.stderr
    assert len(_sessions()) == 1

    provider = gosling(
        ["config", "provider", "--dir", str(repo)],
        repo,
        env=gosling_env(ANTHROPIC_BASE_URL=server.url),
    )
    assert provider.returncode == 0, provider.stderr
    assert f"base URL        {server.url}  [$ANTHROPIC_BASE_URL]" in provider.stdout

    (repo / ".mcp.json").write_text('{"mcpServers": {}}')
    assert gosling(["trust", str(repo)], repo).returncode == 0
    (repo / ".mcp.json").write_text('{"mcpServers": {"x": {"command": "true"}}}')
    server.add(Turn(text="ok"))
    warned = gosling(run_args(server, "anthropic", "x"), repo)
    assert warned.returncode == 0, warned.stderr
    assert f"{repo / '.mcp.json'}: .mcp.json changed since you trusted the folder" in warned.stderr
