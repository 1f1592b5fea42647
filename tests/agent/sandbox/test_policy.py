"""The sandbox's rules as pure functions: the bwrap command line, the environment, the
choice of sandbox and what a project config may change."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gosling.agent.config import ConfigError, load_settings
from gosling.agent.sandbox import (
    BwrapStatus,
    SandboxPolicy,
    bwrap_argv,
    choose_sandbox,
    plan_launch,
    tool_environment,
)
from gosling.agent.sandbox.choice import (
    git_paths,
    host_socket_dirs,
    project_root,
    sandbox_workspace,
    toolchain_in_tmp,
)
from gosling.agent.sandbox.probe import probe
from gosling.prompts.locations import UserDirs

WS = Path("/home/u/project")


def argv(**overrides: object) -> list[str]:
    policy = SandboxPolicy(**{"mode": "workspace-write", "workspace": WS, **overrides})  # type: ignore[arg-type]
    return bwrap_argv(policy, ["bash", "-c", "make test"], cwd=WS / "src")


def pairs(args: list[str], flag: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == flag]


def test_workspace_is_the_only_writable_place_and_tmp_is_private() -> None:
    args = argv()
    assert args[:4] == ["bwrap", "--ro-bind", "/", "/"]
    assert pairs(args, "--bind") == [str(WS)]
    assert pairs(args, "--tmpfs") == ["/tmp", "/var/tmp"]
    assert args.index("--tmpfs") < args.index("--bind"), "a workspace under /tmp must stay visible"
    assert pairs(args, "--chdir") == [str(WS / "src")]
    assert args[args.index("--") + 1 :] == ["bash", "-c", "make test"]


def test_a_sessions_tmp_is_mounted_at_tmp_before_the_workspace() -> None:
    session_tmp = Path("/home/u/.local/state/gosling/sessions/s1/tmp")
    args = argv(tmp=session_tmp)
    assert pairs(args, "--bind")[:2] == [str(session_tmp), str(WS)]
    assert args[args.index(str(session_tmp)) + 1] == "/tmp"
    assert pairs(args, "--tmpfs") == ["/var/tmp"]


def test_read_only_mode_binds_the_workspace_read_only() -> None:
    args = argv(mode="read-only", writable=(WS / "build", Path("/cache")))
    assert str(WS) in pairs(args, "--ro-bind")
    assert pairs(args, "--bind") == ["/cache"]


def test_isolation_flags() -> None:
    args = argv()
    for flag in ("--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session"):
        assert flag in args
    assert pairs(args, "--cap-drop") == ["ALL"]
    assert pairs(args, "--proc") == ["/proc"]
    assert "--unshare-net" not in argv(network=True)


def test_gosling_dirs_are_hidden_unless_they_hold_the_workspace() -> None:
    state = Path("/home/u/.local/state/gosling")
    args = argv(hidden=(state, Path("/home/u")))
    assert pairs(args, "--tmpfs") == ["/tmp", "/var/tmp", str(state)]
    assert args.index(str(WS)) < args.index(str(state))


def test_environment_has_no_credentials_but_keeps_what_the_user_configured() -> None:
    base = {
        "PATH": "/usr/bin",
        "ANTHROPIC_API_KEY": "sk-ant-x",
        "OPENAI_API_KEY": "sk-x",
        "AWS_SECRET_ACCESS_KEY": "aws",
        "GITHUB_TOKEN": "ghp",
        "DATABASE_URL": "postgres://app:pw@db/app",
        "PLAIN_URL": "https://example.com/x",
    }
    env = tool_environment(base, keep={"GITHUB_TOKEN": "for-this-server"})
    assert env == {
        "PATH": "/usr/bin",
        "PLAIN_URL": "https://example.com/x",
        "GITHUB_TOKEN": "for-this-server",
        "GIT_TERMINAL_PROMPT": "0",
    }


def test_a_sandboxed_launch_runs_bwrap_with_a_private_tmpdir() -> None:
    policy = SandboxPolicy(mode="workspace-write", workspace=WS, bwrap="/usr/bin/bwrap")
    launch = plan_launch(["sh", "-c", "x"], cwd=WS, env={"TMPDIR": "/tmp/u"}, sandbox=policy)
    assert launch.argv[0] == "/usr/bin/bwrap" and launch.argv[-3:] == ("sh", "-c", "x")
    assert launch.env["TMPDIR"] == "/tmp"
    plain = plan_launch(["sh", "-c", "x"], cwd=WS, env={"TMPDIR": "/tmp/u"}, sandbox=None)
    assert plain.argv == ("sh", "-c", "x") and plain.env["TMPDIR"] == "/tmp/u"
    assert plain.marker != launch.marker


def test_without_bwrap_there_is_a_warning_and_no_sandbox(tmp_path: Path) -> None:
    missing = BwrapStatus(None, "bubblewrap is not installed")
    choice = choose_sandbox("workspace-write", workspace=tmp_path, status=missing)
    assert choice.policy is None and choice.used == "off"
    assert choice.warning and "bubblewrap is not installed" in choice.warning
    off = choose_sandbox("off", workspace=tmp_path, status=missing)
    assert off.warning is None and off.used == "off"
    there = choose_sandbox(
        "read-only", workspace=tmp_path, status=BwrapStatus("/usr/bin/bwrap"), network=True
    )
    assert there.used == "read-only" and there.policy is not None and there.policy.network


def test_a_worktree_s_gitdir_file_stays_read_only_and_widens_nothing(tmp_path: Path) -> None:
    main = tmp_path / "main"
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (main / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    wt = tmp_path / "wt"
    (wt / "pkg").mkdir(parents=True)
    (wt / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'wt'}\n")
    assert project_root(wt / "pkg") == wt
    assert sandbox_workspace(wt / "pkg") == wt / "pkg"
    assert sandbox_workspace(wt / "pkg", git_root=True) == wt
    assert git_paths(wt) == [wt / ".git"]
    status = BwrapStatus("/usr/bin/bwrap")
    policy = choose_sandbox("workspace-write", workspace=wt, status=status, environ={}).policy
    assert policy is not None and policy.writable == () and policy.read_only == (wt / ".git",)
    args = bwrap_argv(policy, ["true"], cwd=wt)
    assert pairs(args, "--bind") == [str(wt)]
    assert args.index(str(wt / ".git")) > args.index(str(wt)), ".git after the workspace"


def test_proc_is_read_only_and_a_user_namespace_is_used() -> None:
    args = argv()
    assert pairs(args, "--remount-ro") == ["/proc"]
    assert args.index("--remount-ro") > args.index("--proc"), "the fresh /proc itself"
    assert "--unshare-user" in args and "--disable-userns" in args
    bare = argv(user_namespace=False)
    assert "--unshare-user" not in bare and pairs(bare, "--remount-ro") == ["/proc"]
    nested = argv(no_nested_userns=False)
    assert "--unshare-user" in nested and "--disable-userns" not in nested


def test_a_project_config_may_add_hidden_paths_but_not_widen_the_workspace(
    tmp_path: Path,
) -> None:
    dirs = UserDirs(tmp_path / "c", tmp_path / "d", tmp_path / "s")
    dirs.config.mkdir()
    (dirs.config / "config.toml").write_text('sandbox_hide = ["~/keys"]\n')
    repo = tmp_path / "repo"
    (repo / ".gosling").mkdir(parents=True)
    project = 'sandbox_workspace = "git-root"\nsandbox_hide = ["/srv/secrets"]\n'
    (repo / ".gosling" / "config.toml").write_text(project)
    settings = load_settings(repo, environ={}, dirs=dirs, trust_project=True).settings
    assert settings.sandbox_workspace == "working-dir"
    assert settings.sandbox_hide == ["~/keys", "/srv/secrets"]
    flagged = load_settings(repo, environ={}, dirs=dirs, flags={"sandbox_workspace": "git-root"})
    assert flagged.settings.sandbox_workspace == "git-root"


def test_a_relative_sandbox_hide_path_is_refused_with_the_fix(tmp_path: Path) -> None:
    dirs = UserDirs(tmp_path / "c", tmp_path / "d", tmp_path / "s")
    dirs.config.mkdir()
    (dirs.config / "config.toml").write_text('sandbox_hide = ["notes"]\n')
    with pytest.raises(ConfigError, match=r"write it as /abs/path or ~/path"):
        load_settings(tmp_path, environ={}, dirs=dirs)


def test_credentials_and_socket_dirs_are_hidden_after_the_workspace(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for d in (".ssh", ".aws", ".config/gh", "projects/app"):
        (home / d).mkdir(parents=True)
    for f in (".netrc", ".bash_history", ".gitconfig"):
        (home / f).write_text("x")
    runtime = tmp_path / "run-user"
    runtime.mkdir()
    environ = {"HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}
    workspace = home / "projects" / "app"
    choice = choose_sandbox(
        "workspace-write",
        workspace=workspace,
        status=BwrapStatus("/usr/bin/bwrap"),
        environ=environ,
        hidden=[Path("~/.gitconfig")],
    )
    policy = choice.policy
    assert policy is not None
    assert {home / ".ssh", home / ".aws", home / ".config/gh", runtime} <= set(policy.hidden)
    files = {home / ".netrc", home / ".bash_history", home / ".gitconfig"}
    assert set(policy.hidden_files) == files
    args = bwrap_argv(policy, ["true"], cwd=workspace)
    assert args.index(str(home / ".ssh")) > args.index(str(workspace))
    assert [args[i - 1] for i, a in enumerate(args) if a == str(home / ".netrc")] == ["/dev/null"]


def test_a_directory_holding_a_socket_under_home_is_hidden(tmp_path: Path) -> None:
    import socket

    home = tmp_path / "h"
    (home / ".app" / "run").mkdir(parents=True)
    (home / "work").mkdir()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(home / ".app" / "run" / "s"))
    try:
        found = host_socket_dirs(home, {}, skip=[home / "work"])
    finally:
        listener.close()
    assert home / ".app" / "run" in found
    assert all(p == Path(p) and p != home for p in found)


@pytest.mark.parametrize(
    ("user", "project", "expected"),
    [
        ("", 'sandbox = "off"', "workspace-write"),
        ('sandbox = "read-only"', 'sandbox = "workspace-write"', "read-only"),
        ("", 'sandbox = "read-only"', "read-only"),
        ('sandbox = "off"', 'sandbox = "workspace-write"', "workspace-write"),
        ('sandbox = "off"', 'sandbox = "strictest"', "off"),  # not a mode: ignored
    ],
)
def test_a_project_config_may_tighten_the_sandbox_never_loosen_it(
    tmp_path: Path, user: str, project: str, expected: str
) -> None:
    dirs = UserDirs(tmp_path / "c", tmp_path / "d", tmp_path / "s")
    dirs.config.mkdir()
    (dirs.config / "config.toml").write_text(user + "\n")
    repo = tmp_path / "repo"
    (repo / ".gosling").mkdir(parents=True)
    (repo / ".gosling" / "config.toml").write_text(project + "\nsandbox_network = true\n")
    settings = load_settings(repo, environ={}, dirs=dirs).settings
    assert settings.sandbox == expected
    assert settings.sandbox_network is False
    flagged = load_settings(repo, environ={}, dirs=dirs, flags={"sandbox": "off"}).settings
    assert flagged.sandbox == "off"


def test_a_toolchain_under_tmp_stays_visible_but_tmp_itself_stays_private(
    tmp_path: Path,
) -> None:
    venv, tools, stray = tmp_path / "venv", tmp_path / "tools", tmp_path / "gone"
    (venv / "bin").mkdir(parents=True)
    tools.mkdir()
    path = os.pathsep.join(
        [str(venv / "bin"), "/usr/bin", "/tmp", str(tools), "relative/bin", str(stray / "bin")]
    )
    found = toolchain_in_tmp({"PATH": path}, prefixes=[str(venv), "/usr", f"{tools}/../venv"])
    assert found == [venv.resolve(), tools.resolve()]
    args = argv(readable=tuple(found))
    assert pairs(args, "--ro-bind")[1:] == [str(venv.resolve()), str(tools.resolve())]
    assert args.index(str(venv.resolve())) < args.index(str(WS)), "before the workspace"


def test_without_user_namespaces_root_still_gets_the_sandbox_without_one(
    tmp_path: Path,
) -> None:
    """A container that forbids user namespaces: bwrap (run by root) refuses
    `--unshare-user`, and the probe settles on the sandbox without it, /proc read-only."""
    fake = tmp_path / "bwrap"
    fake.write_text(
        '#!/bin/sh\ncase "$*" in *--unshare-user*)\n'
        "  echo 'bwrap: No permissions to create new namespace' >&2; exit 1;;\nesac\nexit 0\n"
    )
    fake.chmod(0o755)
    status = probe(str(fake))
    assert status.path == str(fake) and not status.user_namespace
    choice = choose_sandbox("workspace-write", workspace=tmp_path, status=status, environ={})
    assert choice.policy is not None
    args = bwrap_argv(choice.policy, ["true"], cwd=tmp_path)
    assert "--unshare-user" not in args and pairs(args, "--remount-ro") == ["/proc"]
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    refused = probe(str(fake))
    assert refused.path is None and "setting up uid map: Permission denied" in refused.problem


def test_a_hidden_directory_holding_the_working_directory_is_left_visible() -> None:
    """Hiding it would leave the command in an empty directory: the user chose to work there."""
    secrets, other = WS / "deploy" / "secrets", WS / "other-secrets"
    policy = SandboxPolicy(mode="workspace-write", workspace=WS, hidden=(secrets, other))
    args = bwrap_argv(policy, ["ls"], cwd=secrets / "keys")
    assert pairs(args, "--tmpfs") == ["/tmp", "/var/tmp", str(other)]
