"""`shell_env_allow`: the user lets chosen credentials through to shell commands (so `gh`
and `git push` work); the model still never sees their values, and a checkout cannot do
the same with its own config.

Each test is one `gosling run` against the loopback fake model, whose only tool call runs a
shell command that reports whether it has the token and prints it.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.agent.test_run_e2e import gosling, gosling_env, run_args, tool
from tests.fakes import FakeLLMServer, Turn

TOKEN = "ghp_QZKallowedGithubToken0123456789abcdef"
COMMAND = (
    'if [ -n "$GITHUB_TOKEN" ]; then echo "token: present"; else echo "token: absent"; fi; '
    'echo "value=$GITHUB_TOKEN"'
)


def _run(server: FakeLLMServer, cwd: Path, *flags: str, **env: str) -> str:
    """Run one shell call and return what the model got back from it."""
    server.add(tool("developer__shell", command=COMMAND), Turn(text="done"))
    done = gosling(
        run_args(server, "anthropic", "-t", "check the token", *flags),
        cwd,
        env=gosling_env(GITHUB_TOKEN=TOKEN, **env),
    )
    assert done.returncode == 0, done.stderr
    return json.dumps(server.model_requests()[-1].body) + done.stdout + done.stderr


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    return repo


def test_without_the_setting_commands_do_not_get_the_token(
    tmp_path: Path, _isolated_home: Path
) -> None:
    with FakeLLMServer() as server:
        seen = _run(server, _repo(tmp_path))
    assert "token: absent" in seen
    assert TOKEN not in seen


def test_a_token_the_user_allows_reaches_commands_but_not_the_model(
    tmp_path: Path, _isolated_home: Path
) -> None:
    config = _isolated_home / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('shell_env_allow = ["GITHUB_TOKEN"]\n')
    with FakeLLMServer() as server:
        seen = _run(server, _repo(tmp_path))
    assert "token: present" in seen
    assert "value=[REDACTED:GITHUB_TOKEN]" in seen
    assert TOKEN not in seen


def test_the_environment_variable_allows_it_too(tmp_path: Path, _isolated_home: Path) -> None:
    with FakeLLMServer() as server:
        seen = _run(server, _repo(tmp_path), GOSLING_SHELL_ENV_ALLOW="GH_TOKEN,GITHUB_TOKEN")
    assert "token: present" in seen
    assert TOKEN not in seen


def test_a_trusted_checkout_cannot_pass_the_users_token_to_its_commands(
    tmp_path: Path, _isolated_home: Path
) -> None:
    """The attack: a repository's own config asks for the user's GitHub token in the shell,
    where a command of its choosing (a test script, a git hook) could send it away."""
    repo = _repo(tmp_path)
    (repo / ".gosling").mkdir()
    (repo / ".gosling" / "config.toml").write_text('shell_env_allow = ["GITHUB_TOKEN"]\n')
    with FakeLLMServer() as server:
        seen = _run(server, repo, "--trust-project")
    assert "token: absent" in seen
    assert "cannot pass credentials to commands" in seen


def test_a_name_that_is_not_a_variable_is_refused_with_the_fix(
    tmp_path: Path, _isolated_home: Path
) -> None:
    done = gosling(
        ["run", "-t", "hi"],
        _repo(tmp_path),
        env=gosling_env(GOSLING_SHELL_ENV_ALLOW="GITHUB TOKEN"),
    )
    assert done.returncode != 0
    assert "'GITHUB TOKEN' is not an environment variable name" in done.stderr
    assert "e.g. GITHUB_TOKEN" in done.stderr
