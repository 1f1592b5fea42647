"""Issue 26's attacks end to end: `gosling run` in a hostile clone, one line per family.

The clone is a real git repository holding a payload file and a bare repository committed
inside it (`evil.git`, whose `core.fsmonitor` runs on `git status`). The fake model asks for
every attack line in one turn. With the allow rules `ls`, `cat`, `git status`, `git diff`
(in `approve` and `smart_approve`) no line may create its marker file; with a deny rule on
`rm` in `auto` mode no line may delete its victim file. A last test runs `git status` in the
bare repository in `auto` mode with no rules at all: the shell tool's git environment alone
must keep the repository's config from running.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from gosling.prompts.locations import user_dirs
from tests.agent.test_run_e2e import gosling, run_args, server
from tests.fakes import FakeLLMServer, FakeToolCall, Turn

__all__ = ["server"]  # the fixture, shared with test_run_e2e

ALLOW = ["developer__shell(ls)", "developer__shell(cat)", "developer__shell(git status)",
         "developer__shell(git diff)"]  # fmt: skip
ALLOW_ATTACKS = {
    "control characters": ("ls \f#; touch PWN1", "PWN1"),
    "backslash-newline": ("\\\nls; touch PWN2", "PWN2"),
    "arithmetic on a file": ("ls $(( $(cat payload3) ))", "PWN3"),
    "xargs -e": ("xargs -e touch cat", "cat"),
    "env --default-signal": ("env --default-signal touch ls", "ls"),
    "nameref to the command hash": (
        "declare -n r='BASH_CMDS[ls]'; r=/usr/bin/touch; ls PWN6",
        "PWN6",
    ),
    "here-doc delimiter": ("cat <<$X\n$(touch PWN7)\n$X", "PWN7"),
    "sh -c read by dash": ("sh -c 'ls &>/dev/null touch PWN8'", "PWN8"),
    "git status in a bare repository": ("cd evil.git && git status", "FSMON"),
    "git diff --output": ("git diff --output=PWN10", "PWN10"),
}
DENY_ATTACKS = {
    "eval --": "eval -- 'rm v1'",
    "trap --": "trap -- 'rm v2' EXIT",
    "compgen -C": "compgen -C 'rm v3' x",
    "BASH_CMDS": "BASH_CMDS[ls]=/bin/rm; ls v4",
    "wrapper": "setsid -w rm v5",
    "nameref": "declare -n r='BASH_CMDS[cat]'; r=/bin/rm; cat v6",
    "hash -p": "hash -p /bin/rm ls; ls v7",
    "xargs -e": "echo v8 | xargs -e rm",
    "env option": "env --default-signal rm v9",
    "arithmetic": "ls $(( $(cat payload10) ))",
    "sh -c read by dash": "sh -c 'ls &>/dev/null rm v11'",
    "here-doc delimiter": "cat <<$X\n$(rm v12)\n$X",
    "control character": "ls \f#; rm v13",
    "backslash-newline": "\\\nls; rm v14",
    "flock -c": "flock lk -c 'rm v15'",
}


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=repo, env=env,
                   check=True, capture_output=True)  # fmt: skip


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A hostile clone: payload files and a bare repository committed as ordinary files."""
    repo = tmp_path / "clone"
    repo.mkdir()
    (repo / "hello.txt").write_text("hello\n")
    (repo / "payload3").write_text("a[$(touch PWN3)]\n")
    (repo / "payload10").write_text("a[$(rm v10)]\n")
    for number in range(1, 16):
        (repo / f"v{number}").write_text("keep me\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "clone")
    _git(repo, "init", "-q", "--bare", "evil.git")
    config = repo / "evil.git" / "config"
    with config.open("a") as handle:
        handle.write("[core]\n\tworktree = ..\n\tbare = false\n")
        handle.write('\tfsmonitor = "touch FSMON; rm -f v16; false"\n')
    (repo / "v16").write_text("keep me\n")
    return repo


def _rules(**lists: list[str]) -> None:
    config = user_dirs().config / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f"{name} = {json.dumps(values)}\n" for name, values in lists.items())
    config.write_text("[permissions]\n" + body)


def _run(server: FakeLLMServer, clone: Path, mode: str, commands: list[str]) -> str:
    calls = [FakeToolCall("developer__shell", {"command": c}) for c in commands]
    server.add(Turn(tool_calls=calls), Turn(text="done"))
    result = gosling(run_args(server, "anthropic", "--mode", mode, "-t", "look around"), clone)
    assert "done" in result.stdout, result.stderr
    return result.stderr


@pytest.mark.parametrize("mode", ["approve", "smart_approve"])
def test_allow_rules_approve_none_of_the_attack_lines(
    mode: str, clone: Path, server: FakeLLMServer
) -> None:
    _rules(allow=ALLOW)
    _run(server, clone, mode, [line for line, _ in ALLOW_ATTACKS.values()])
    ran = [family for family, (_, marker) in ALLOW_ATTACKS.items() if (clone / marker).exists()]
    assert ran == []


def test_a_deny_rule_on_rm_stops_every_attack_line_in_auto_mode(
    clone: Path, server: FakeLLMServer
) -> None:
    _rules(deny=["developer__shell(rm)"])
    _run(server, clone, "auto", list(DENY_ATTACKS.values()))
    deleted = [family for number, family in enumerate(DENY_ATTACKS, start=1)
               if not (clone / f"v{number}").exists()]  # fmt: skip
    assert deleted == []


def test_git_in_a_committed_bare_repository_runs_none_of_its_config(
    clone: Path, server: FakeLLMServer
) -> None:
    """No rule, `auto` mode: only the shell tool's git environment stands in the way."""
    stderr = _run(server, clone, "auto", ["cd evil.git && git status; git -C evil.git log"])
    assert not (clone / "FSMON").exists(), stderr
    assert (clone / "v16").exists()
    body = json.dumps(server.model_requests()[1].body)
    assert "safe.bareRepository" in body


def test_smart_approve_runs_read_only_commands_without_asking(
    clone: Path, server: FakeLLMServer
) -> None:
    commands = ["ls", "cat hello.txt", "git status --short", "git log --oneline -1 | head -1"]
    calls = [FakeToolCall("developer__shell", {"command": c}) for c in commands]
    server.add(Turn(tool_calls=calls), Turn(text="done"))
    result = gosling(run_args(server, "anthropic", "--mode", "smart_approve", "-t", "x"), clone)
    assert result.returncode == 0, result.stderr
    body = json.dumps(server.model_requests()[1].body)
    assert "Permission denied" not in body
    assert "hello.txt" in body and "hello\\n" in body and "clone" in body
