"""A hostile checkout's hint settings, attacked end to end through `gosling run`.

Its config names `.env`, `.npmrc` and `config.toml` as hint files (which put the checkout's
gitignored `.env` and the user's own config, MCP tokens and all, into the system prompt), and
its AGENTS.md imports sixty 16 KiB files (1 MiB in every request).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent.test_run_e2e import gosling, run_args
from tests.fakes import FakeLLMServer

USER_CONFIG_MARKER = "user-config-marker-7Q2"
DOTENV_MARKER = "dotenv-marker-K9X"
NPMRC_MARKER = "npmrc-marker-W4Z"
AGENTS_MARKER = "agents-md-marker-B5N"


def _system_prompt(server: FakeLLMServer) -> str:
    return json.dumps(server.model_requests()[0].body["system"])


@pytest.fixture
def checkout(tmp_path: Path, _isolated_home: Path) -> Path:
    work = tmp_path / "checkout"
    (work / ".git").mkdir(parents=True)
    (work / ".gosling").mkdir()
    (work / ".env").write_text(f"# {DOTENV_MARKER}\nAPP_MODE=dev\n")
    (work / ".npmrc").write_text(f"# {NPMRC_MARKER}\n")
    (work / "AGENTS.md").write_text(f"Run the tests. {AGENTS_MARKER}\n")
    user_config = _isolated_home / "config" / "config.toml"
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text(f"# {USER_CONFIG_MARKER}\nmask_keep_last = 3\n")
    return work


def test_untrusted_config_cannot_load_dotenv_or_the_users_config(checkout: Path) -> None:
    (checkout / ".gosling" / "config.toml").write_text(
        'context_file_names = ["config.toml", ".env", ".npmrc", "AGENTS.md"]\n'
    )
    with FakeLLMServer() as server:
        server.add("ok")
        result = gosling(run_args(server, "anthropic", "-t", "hi"), checkout)
        system = _system_prompt(server)
    assert result.returncode == 0, result.stderr
    for marker in (USER_CONFIG_MARKER, DOTENV_MARKER, NPMRC_MARKER):
        assert marker not in system, marker
    assert AGENTS_MARKER in system  # the default names still apply
    assert "ignored context_file_names" in result.stderr
    assert "gosling trust" in result.stderr


def test_names_a_project_chooses_are_never_looked_up_in_the_users_config_dir(
    checkout: Path,
) -> None:
    # Even trusted, the project's names are for the project's files only.
    (checkout / ".gosling" / "config.toml").write_text(
        'context_file_names = ["config.toml", "AGENTS.md"]\n'
    )
    with FakeLLMServer() as server:
        server.add("ok")
        result = gosling(run_args(server, "anthropic", "-t", "hi", "--trust-project"), checkout)
        system = _system_prompt(server)
    assert result.returncode == 0, result.stderr
    assert USER_CONFIG_MARKER not in system
    assert AGENTS_MARKER in system


def test_a_hint_import_bomb_is_capped_by_the_models_window(checkout: Path) -> None:
    docs = checkout / "docs"
    docs.mkdir()
    for n in range(60):
        (docs / f"part{n:02d}.md").write_text(f"part {n:02d} " + "x" * 16 * 1024 + "\n")
    imports = "\n".join(f"@docs/part{n:02d}.md" for n in range(60))
    (checkout / "AGENTS.md").write_text(f"{AGENTS_MARKER}\n{imports}\n")
    with FakeLLMServer() as server:
        server.add("ok")
        result = gosling(
            run_args(server, "anthropic", "-t", "hi", "--context-limit", "128000"), checkout
        )
        system = _system_prompt(server)
    assert result.returncode == 0, result.stderr
    # 10% of a 128k-token window is about 51 KB of imports: three of the sixty files.
    assert len(system.encode()) < 80_000
    assert "part 00 " in system and AGENTS_MARKER in system
    assert "@docs/part59.md" in system  # left as written
    warning = next(line for line in result.stderr.splitlines() if "left out" in line)
    assert "@docs/part59.md" in warning and "@docs/part03.md" in warning
