"""Shell permission attacks through `gosling run` against the loopback fake server."""

from __future__ import annotations

from pathlib import Path

import pytest

from gosling.prompts.locations import user_dirs
from tests.agent.test_run_e2e import gosling, repo, run_args, server, tool
from tests.fakes import FakeLLMServer, Turn

__all__ = ["repo", "server"]  # fixtures shared with test_run_e2e


def user_rules(**lists: list[str]) -> None:
    config = user_dirs().config / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f"{name} = {values!r}\n".replace("'", '"') for name, values in lists.items())
    config.write_text("[permissions]\n" + body)


@pytest.mark.parametrize("mode", ["approve", "smart_approve"])
def test_a_hash_in_a_word_cannot_smuggle_a_command_past_an_allow_rule(
    mode: str, repo: Path, server: FakeLLMServer
) -> None:
    user_rules(allow=["developer__shell(ls)"])
    server.add(tool("developer__shell", command="ls a#; touch PWNED"), Turn(text="done"))
    result = gosling(run_args(server, "anthropic", "--mode", mode, "-t", "list files"), repo)
    assert result.returncode == 4, result.stderr
    assert not (repo / "PWNED").exists()
    assert "touch PWNED" in result.stderr


def test_the_allow_rule_still_runs_what_it_names(repo: Path, server: FakeLLMServer) -> None:
    user_rules(allow=["developer__shell(ls)"])
    (repo / "a#").write_text("listed\n")
    server.add(tool("developer__shell", command="ls a#"), Turn(text="done"))
    result = gosling(run_args(server, "anthropic", "--mode", "approve", "-t", "list"), repo)
    assert result.returncode == 0, result.stderr
    assert "a#" in str(server.model_requests()[1].body)


def test_a_deny_rule_on_rm_holds_against_an_absolute_path(
    repo: Path, server: FakeLLMServer
) -> None:
    user_rules(deny=["developer__shell(rm)"])
    server.add(tool("developer__shell", command="ls a#; /bin/rm hello.txt"), Turn(text="done"))
    result = gosling(run_args(server, "anthropic", "--mode", "auto", "-t", "clean up"), repo)
    assert (repo / "hello.txt").exists()
    assert "Permission denied" in str(server.model_requests()[1].body), result.stderr
