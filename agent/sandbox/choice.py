"""Which sandbox a session gets: the requested mode, if this machine can provide it."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gosling.agent.sandbox.policy import PRIVATE_TMP, SandboxMode, SandboxPolicy
from gosling.agent.sandbox.probe import BwrapStatus, bwrap_status


@dataclass(frozen=True)
class SandboxChoice:
    requested: SandboxMode
    policy: SandboxPolicy | None
    """None: tool processes run unsandboxed."""
    warning: str | None = None
    """Set when a sandbox was asked for and none is available; shown to the user once."""

    @property
    def used(self) -> SandboxMode:
        return "off" if self.policy is None else self.policy.mode


def mcp_policy(
    policy: SandboxPolicy, *, network: bool, environ: Mapping[str, str] | None = None
) -> SandboxPolicy:
    """The session's sandbox for an MCP server: its own network switch, and the package
    caches writable so that `uvx` / `npx` launchers can install and start the server."""
    caches = tuple(p for p in launcher_caches(environ) if p.is_dir())
    return dataclasses.replace(policy, network=network, writable=(*policy.writable, *caches))


def launcher_caches(environ: Mapping[str, str] | None = None) -> list[Path]:
    """Where uv, pip and npm keep downloads (XDG cache, ~/.npm, uv's tool and python dirs)."""
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or Path.home())
    cache = Path(env["XDG_CACHE_HOME"]) if env.get("XDG_CACHE_HOME") else home / ".cache"
    return [cache, home / ".npm", home / ".local" / "share" / "uv"]


def choose_sandbox(
    mode: SandboxMode,
    *,
    workspace: Path,
    network: bool = False,
    hidden: Iterable[Path] = (),
    status: BwrapStatus | None = None,
) -> SandboxChoice:
    """The sandbox for `mode`, or none with a warning saying why (and that nothing changes)."""
    if mode == "off":
        return SandboxChoice(mode, None)
    status = status or bwrap_status()
    if status.path is None:
        return SandboxChoice(
            mode,
            None,
            f"no sandbox for tool processes: {status.problem}; shell commands and MCP servers "
            'run with your own permissions (set sandbox = "off" to silence this)',
        )
    policy = SandboxPolicy(
        mode=mode,
        workspace=workspace,
        network=network,
        writable=tuple(linked_git_dirs(workspace)) if mode == "workspace-write" else (),
        hidden=tuple(p for p in hidden if p.is_dir()),
        readable=tuple(toolchain_in_tmp()),
        bwrap=status.path,
    )
    return SandboxChoice(mode, policy)


def toolchain_in_tmp(
    environ: Mapping[str, str] | None = None, prefixes: Iterable[str] | None = None
) -> list[Path]:
    """The user's programs that live under `/tmp` or `/var/tmp`, which the sandbox's private
    tmp would hide: PATH entries there (a `bin` dir as its whole prefix, so a venv keeps
    its packages) and Python's own prefix (gosling's venv, the interpreter MCP servers are
    often started with). Never a tmp dir itself, so the rest of it stays private."""
    env = os.environ if environ is None else environ
    if prefixes is None:
        prefixes = {sys.prefix, sys.base_prefix}
    found: dict[Path, None] = {}
    candidates = [Path(p) for p in env.get("PATH", "").split(os.pathsep) if p]
    candidates = [p.parent if p.name == "bin" else p for p in candidates]
    for given in [*candidates, *(Path(p) for p in prefixes)]:
        if not given.is_absolute():
            continue
        path = given.resolve()
        for tmp in map(Path, PRIVATE_TMP):
            if path != tmp and path.is_relative_to(tmp) and path.is_dir():
                found[path] = None
    return list(found)


def project_root(working_dir: Path) -> Path:
    """The git root above `working_dir` (the whole repo is the workspace), else the dir."""
    for directory in (working_dir, *working_dir.parents):
        if (directory / ".git").exists():
            return directory
    return working_dir


def linked_git_dirs(root: Path) -> list[Path]:
    """Where git writes for a worktree or submodule whose `.git` is a `gitdir:` file: that
    directory and the repository's common dir, so commits work inside the sandbox."""
    dot_git = root / ".git"
    if not dot_git.is_file():
        return []
    try:
        line = dot_git.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return []
    if not line.startswith("gitdir:"):
        return []
    gitdir = (root / line.removeprefix("gitdir:").strip()).resolve()
    found = [gitdir]
    try:
        common = (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
        found.append(common)
    except (OSError, UnicodeDecodeError):
        pass
    return [p for p in found if p.is_dir()]
