"""Flags people already type in other agent CLIs, mapped onto gosling's, and headless results
they can script against; each through a `gosling` subprocess against the fake server."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gosling.sessions import SqliteSessionStore
from tests.agent.test_run_e2e import gosling, gosling_env, run_args, tool
from tests.fakes import FakeLLMServer, FakeUsage, Turn


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    (work / ".git").mkdir(parents=True)
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


def test_positional_prompt_and_p_flag(repo: Path, server: FakeLLMServer) -> None:
    server.add(Turn(text="one"), Turn(text="two"))
    positional = gosling(run_args(server, "anthropic", "fix", "the bug"), repo)
    assert positional.returncode == 0, positional.stderr
    assert "fix the bug" in json.dumps(server.model_requests()[0].body)
    short = gosling(run_args(server, "anthropic", "-p", "explain main.py"), repo)
    assert short.returncode == 0, short.stderr
    assert "explain main.py" in json.dumps(server.model_requests()[1].body)
    both = gosling(run_args(server, "anthropic", "-p", "x", "y"), repo)
    assert both.returncode == 2 and "one way" in both.stderr


def test_sessions_are_named_from_the_first_prompt(repo: Path, server: FakeLLMServer) -> None:
    server.add(Turn(text="done"))
    prompt = "Refactor the payment module so that retries back off exponentially and log"
    assert gosling(run_args(server, "anthropic", prompt), repo).returncode == 0
    ((_, name),) = _sessions()
    assert name.endswith("…") and prompt.startswith(name[:-1]) and len(name) <= 61


def test_continue_and_resume_without_an_id_take_the_latest_session_here(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(Turn(text="The answer is 42."), Turn(text="c"), Turn(text="r"), Turn(text="id"))
    assert gosling(run_args(server, "anthropic", "first question"), repo).returncode == 0
    ((session_id, _),) = _sessions()
    for flags in (["-c"], ["-r"], ["--resume", session_id]):
        result = gosling(run_args(server, "anthropic", *flags, "-t", "and then?"), repo)
        assert result.returncode == 0, result.stderr
        assert "The answer is 42." in json.dumps(server.model_requests()[-1].body)
    assert len(_sessions()) == 1


def test_json_result_carries_what_scripts_need(repo: Path, server: FakeLLMServer) -> None:
    server.add(
        Turn(
            text="Done.",
            usage=FakeUsage(input_tokens=6_000, output_tokens=1_000, cache_read_tokens=4_000),
        )
    )
    args = run_args(server, "anthropic", "--json", "-t", "x")
    args[args.index("--model") + 1] = "claude-sonnet-4-6"
    result = gosling(args, repo)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["provider"] == "anthropic" and payload["model"] == "claude-sonnet-4-6"
    assert payload["num_turns"] == 1 and payload["is_error"] is False
    assert isinstance(payload["duration_ms"], int) and payload["duration_ms"] > 0
    assert payload["usage"]["cache_read_input_tokens"] == 4_000
    # Sonnet 4.6: $3/M input, $0.30/M cache reads, $15/M output
    expected = (6_000 * 3.0 + 4_000 * 0.3 + 1_000 * 15.0) / 1_000_000
    assert payload["total_cost_usd"] == pytest.approx(expected)


def test_a_price_declared_in_config_prices_an_unknown_model(
    repo: Path, server: FakeLLMServer
) -> None:
    config = Path(gosling(["config", "path"], repo).stdout.strip())
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[models."test-model".price]\ninput = 2.0\noutput = 8.0\n')
    server.add(Turn(text="ok", usage=FakeUsage(input_tokens=500_000, output_tokens=100_000)))
    result = gosling(run_args(server, "anthropic", "--json", "x"), repo)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["total_cost_usd"] == pytest.approx(1.0 + 0.8)


def test_output_last_message_writes_the_answer(repo: Path, server: FakeLLMServer) -> None:
    server.add(Turn(text="The fix is in place."))
    target = repo / "answer.md"
    result = gosling(run_args(server, "anthropic", "-o", str(target), "x"), repo)
    assert result.returncode == 0, result.stderr
    assert target.read_text() == "The fix is in place.\n"


def test_appended_instructions_reach_the_system_prompt(repo: Path, server: FakeLLMServer) -> None:
    (repo / "rules.md").write_text("Answer in French.")
    server.add(Turn(text="ok"))
    result = gosling(
        run_args(
            server,
            "anthropic",
            "--append-system-prompt",
            "Never push to main.",
            "--instructions",
            str(repo / "rules.md"),
            "x",
        ),
        repo,
    )
    assert result.returncode == 0, result.stderr
    system = json.dumps(server.model_requests()[0].body["system"])
    assert "Never push to main." in system and "Answer in French." in system


def test_allowed_and_disallowed_tools_are_rules_for_this_run(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(tool("developer__shell", command="touch allowed"), Turn(text="ran it"))
    allowed = gosling(
        run_args(server, "anthropic", "--mode", "approve", "--allowed-tools", "Bash(touch:*)", "x"),
        repo,
    )
    assert allowed.returncode == 0, allowed.stderr
    assert (repo / "allowed").exists()

    server.add(tool("developer__shell", command="touch denied"), Turn(text="could not"))
    denied = gosling(
        run_args(server, "anthropic", "--disallowed-tools", "developer__shell(touch)", "x"), repo
    )
    assert not (repo / "denied").exists()
    assert "deny" in json.dumps(server.model_requests()[-1].body).lower()
    assert denied.returncode in (0, 4)


def test_mcp_config_in_claude_code_format_starts_the_servers(
    repo: Path, server: FakeLLMServer
) -> None:
    config = repo / "mcp.json"
    config.write_text(
        json.dumps(
            {"mcpServers": {"time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]}}}
        )
    )
    server.add(tool("time__get_current_time", timezone="Europe/Paris"), Turn(text="late"))
    result = gosling(run_args(server, "openai", "--mcp-config", str(config), "time?"), repo)
    assert result.returncode == 0, result.stderr
    first, second = (r.body for r in server.model_requests())
    assert "time__get_current_time" in json.dumps(first["tools"])
    assert "Europe/Paris" in json.dumps(second["messages"])


def test_max_turns_and_interrupts_say_how_to_continue(repo: Path, server: FakeLLMServer) -> None:
    server.add(tool("developer__shell", command="echo one"))
    result = gosling(run_args(server, "anthropic", "--max-turns", "1", "x"), repo)
    assert result.returncode == 3
    ((session_id, _),) = _sessions()
    (line,) = [ln for ln in result.stderr.splitlines() if ln.startswith("gosling: stopped")]
    assert session_id in line and f"gosling run -r {session_id}" in line


def test_usage_and_config_errors_exit_2_with_one_style(repo: Path) -> None:
    env = gosling_env()
    typo = gosling(["run", "--provider", "antropic", "x"], repo, env=env)
    assert typo.returncode == 2
    assert typo.stderr.startswith("error: unknown provider 'antropic'; did you mean 'anthropic'?")
    command = gosling(["sesions", "list"], repo, env=env)
    assert command.returncode == 2 and "did you mean 'sessions'?" in command.stderr
    option = gosling(["run", "--jsonn", "x"], repo, env=env)
    assert option.returncode == 2 and option.stderr.startswith("error: no such option")
    for result in (typo, command, option):
        assert "Error:" not in result.stderr


def test_refused_connection_names_the_url(repo: Path) -> None:
    result = gosling(
        ["run", "--provider", "anthropic", "--base-url", "http://127.0.0.1:9", "x"],
        repo,
    )
    assert result.returncode == 1
    assert "error:" in result.stderr and "http://127.0.0.1:9" in result.stderr


def test_session_list_and_sessions_ls_mean_sessions_list(repo: Path, server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    assert gosling(run_args(server, "anthropic", "--name", "nightly", "x"), repo).returncode == 0
    for words in (["session", "list"], ["sessions", "ls"]):
        result = gosling(words, repo)
        assert result.returncode == 0, result.stderr
        assert "nightly" in result.stdout


def test_stream_json_prints_each_tool_output_once(repo: Path, server: FakeLLMServer) -> None:
    marker = "42-distinct"  # in the output only: the command computes it
    server.add(tool("developer__shell", command="echo $((6*7))-distinct"), Turn(text="Said it."))
    result = gosling(
        run_args(server, "openai", "--output-format", "stream-json", "-t", "say it"), repo
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count(marker) == 1
    events = [json.loads(line) for line in result.stdout.splitlines()]
    (tool_result,) = [e for e in events if e["type"] == "tool_result"]
    assert marker in tool_result["output"]
    (answer,) = [
        part
        for e in events
        if e["type"] == "message"
        for part in e["message"]["content"]
        if part["type"] == "tool_response"
    ]
    assert answer["id"] == tool_result["id"] and answer["output_in"] == "tool_result"


def test_a_project_mcp_json_starts_its_servers_only_once_the_folder_is_trusted(
    repo: Path, server: FakeLLMServer
) -> None:
    marker = repo.parent / "mcp-server-started"
    script = f"open({str(marker)!r}, 'w').close(); import mcp_server_time.__main__"
    server_spec = {"command": sys.executable, "args": ["-c", script]}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": server_spec}}))

    server.add(Turn(text="no tools here"))
    untrusted = gosling(run_args(server, "openai", "--sandbox", "off", "time?"), repo)
    assert untrusted.returncode == 0, untrusted.stderr
    assert not marker.exists()  # the repository's program never ran
    assert "time__get_current_time" not in json.dumps(server.model_requests()[0].body)
    assert f"gosling trust {repo}" in untrusted.stderr

    trusted = gosling(["trust", str(repo)], repo)
    assert trusted.returncode == 0, trusted.stderr
    assert "time (stdio): " in trusted.stdout  # the servers were shown before trusting

    server.add(Turn(text="now with tools"))
    after = gosling(run_args(server, "openai", "--sandbox", "off", "time?"), repo)
    assert after.returncode == 0, after.stderr
    assert marker.exists()
    assert "time__get_current_time" in json.dumps(server.model_requests()[1].body)

    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"t2": server_spec}}))
    marker.unlink()
    server.add(Turn(text="changed file"))
    changed = gosling(run_args(server, "openai", "--sandbox", "off", "time?"), repo)
    assert changed.returncode == 0, changed.stderr
    assert not marker.exists()  # a changed file is untrusted again
