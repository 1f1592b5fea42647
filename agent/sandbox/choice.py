"""Which sandbox a session gets: the requested mode, if this machine can provide it."""

from __future__ import annotations

import dataclasses
import os
import stat
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gosling.agent.sandbox.policy import PRIVATE_TMP, SandboxMode, SandboxPolicy
from gosling.agent.sandbox.probe import BwrapStatus, bwrap_status
from gosling.agent.sandbox.seccomp import filter_file


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
    policy: SandboxPolicy, *, network: bool, name: str, argv: Iterable[str] = ()
) -> SandboxPolicy:
    """The session's sandbox for the MCP server `name` started as `argv`: its own network
    switch, a writable cache of its own (`server_cache`) instead of the user's `~/.cache`,
    `~/.npm` or `~/.local/share`, where gosling itself and tools such as pre-commit live,
    and the directory of each program or script it names by absolute path under `/tmp`
    visible read-only (the private tmp would hide a server run from a clone there)."""
    cache = server_cache(policy, name)
    writable = policy.writable
    if cache is not None:
        cache.mkdir(mode=0o700, parents=True, exist_ok=True)
        writable = (*writable, cache)
    readable = dict.fromkeys(policy.readable)
    for word in argv:
        path = Path(word)
        if not path.is_absolute() or not path.is_file():
            continue
        folder = path.resolve().parent
        if any(folder != Path(t) and folder.is_relative_to(t) for t in PRIVATE_TMP):
            readable[folder] = None
    return dataclasses.replace(policy, network=network, writable=writable, readable=tuple(readable))


def server_cache(policy: SandboxPolicy, name: str) -> Path | None:
    """The MCP server `name`'s own cache directory, when the session has a place for them."""
    if policy.server_caches is None:
        return None
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).lstrip(".") or "_"
    return policy.server_caches / safe


def server_cache_environment(cache: Path) -> dict[str, str]:
    """Points uv, pip, npm and XDG-aware programs at the server's own cache, so `uvx` and
    `npx` launchers can download the server there."""
    return {
        "XDG_CACHE_HOME": str(cache),
        "UV_CACHE_DIR": str(cache / "uv"),
        "PIP_CACHE_DIR": str(cache / "pip"),
        "npm_config_cache": str(cache / "npm"),
    }


CREDENTIAL_DIRS = (
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".config/gh",
    ".gnupg",
    ".password-store",
    ".oci",
    ".config/doctl",
    ".terraform.d",
    ".local/share/keyrings",
)
CREDENTIAL_FILES = (
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".config/git/credentials",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".boto",
    ".s3cfg",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".config/hub",
    ".bash_history",
    ".zsh_history",
    ".sh_history",
    ".history",
    ".histfile",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".rediscli_history",
    ".lesshst",
    ".local/share/fish/fish_history",
)
"""Relative to `$HOME`: hidden from every sandboxed process (reading stays broad otherwise)."""
SOCKET_SCAN_DEPTH = 4
SOCKET_SCAN_ENTRIES = 5000
"""How far the look for unix sockets under `$HOME` goes (once per session)."""
SOCKET_SCAN_SKIP = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", "site-packages"}
)
HOST_SOCKET_DIRS = ("/run", "/var/run")
GIT_SCAN_DEPTH = 4
GIT_SCAN_ENTRIES = 5000
"""How far the look for repositories inside the workspace goes (once per session)."""


def sandbox_workspace(working_dir: Path, *, git_root: bool = False) -> Path:
    """The directory sandboxed commands may write: the working directory the user chose,
    or its git root when the user widened it (`sandbox_workspace = "git-root"`)."""
    return project_root(working_dir) if git_root else working_dir


def choose_sandbox(
    mode: SandboxMode,
    *,
    workspace: Path,
    network: bool = False,
    hidden: Iterable[Path] = (),
    status: BwrapStatus | None = None,
    environ: Mapping[str, str] | None = None,
    server_caches: Path | None = None,
    filters: Path | None = None,
) -> SandboxChoice:
    """The sandbox for `mode`, or none with a warning saying why (and that nothing changes).

    `hidden`: further paths to hide, directories or files (gosling's own dirs, the user's
    `sandbox_hide`); `server_caches`: where each MCP server gets its own writable cache;
    `filters`: where the seccomp filter is written (none: no filter)."""
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
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or Path.home())
    dirs, files = _hidden_paths(home, hidden)
    socket_dirs = host_socket_dirs(home, env, skip=(workspace, *dirs))
    dirs = list(dict.fromkeys([*dirs, *socket_dirs]))
    policy = SandboxPolicy(
        mode=mode,
        workspace=workspace,
        network=network,
        read_only=tuple(git_paths(workspace)),
        hidden=tuple(dirs),
        hidden_files=tuple(files),
        kept=tuple(_kept_files(dirs)),
        readable=tuple(toolchain_in_tmp(env)),
        bwrap=status.path,
        user_namespace=status.user_namespace,
        no_nested_userns=status.no_nested_userns,
        server_caches=server_caches,
        seccomp=filter_file(filters) if filters is not None else None,
    )
    return SandboxChoice(mode, policy)


def credential_locations(home: Path, extra: Iterable[Path] = ()) -> tuple[Path, ...]:
    """The credential locations (and `extra`, config `sandbox_hide`) that exist here, resolved:
    what nothing gosling reads on the model's behalf may show."""
    dirs, files = _hidden_paths(home, extra)
    return (*dirs, *files)


def _hidden_paths(home: Path, extra: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """The credential locations and `extra` that exist here: (directories, files)."""
    candidates = [home / d for d in CREDENTIAL_DIRS] + [home / f for f in CREDENTIAL_FILES]
    dirs: dict[Path, None] = {}
    files: dict[Path, None] = {}
    for path in [*candidates, *extra]:
        if str(path).startswith("~"):
            path = home / str(path).removeprefix("~").lstrip("/")
        try:
            real = path.resolve()
            if real.is_dir():
                dirs[real] = None
            elif real.exists():
                files[real] = None
        except OSError:
            continue
    kept_files = [f for f in files if not any(f.is_relative_to(d) for d in dirs)]
    return list(dirs), kept_files


def host_socket_dirs(
    home: Path, environ: Mapping[str, str], *, skip: Iterable[Path] = ()
) -> list[Path]:
    """Directories that hold host unix sockets, to be hidden: `/run` (and `/var/run` when it
    is not a link to it), `$XDG_RUNTIME_DIR`, and each directory under `$HOME` (a bounded
    look) that has a socket in it, other than `$HOME` itself. A socket stays reachable
    through a read-only mount, so only hiding its directory stops a `connect`."""
    found: dict[Path, None] = {}
    runtime = environ.get("XDG_RUNTIME_DIR")
    for given in (*HOST_SOCKET_DIRS, *([runtime] if runtime else [])):
        path = Path(given).resolve()
        if path.is_dir() and path != Path("/"):
            found[path] = None
    skipped = [p.resolve() for p in skip]
    for directory in _socket_parents(home.resolve(), skipped):
        if directory != home.resolve() and not any(s.is_relative_to(directory) for s in skipped):
            found[directory] = None
    return list(found)


def _socket_parents(home: Path, skip: list[Path]) -> list[Path]:
    """Directories under `home` (breadth first, bounded) that directly hold a socket."""
    found: list[Path] = []
    skipped = {str(p) for p in skip}
    level = [str(home)]
    seen = 0
    for _ in range(SOCKET_SCAN_DEPTH):
        below: list[str] = []
        for directory in level:
            try:
                with os.scandir(directory) as entries:
                    listed = list(entries)
            except OSError:
                continue
            seen += len(listed)
            for entry in listed:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in SOCKET_SCAN_SKIP and entry.path not in skipped:
                            below.append(entry.path)
                    elif _is_socket(entry) and Path(directory) not in found:
                        found.append(Path(directory))
                except OSError:
                    continue
            if seen > SOCKET_SCAN_ENTRIES:
                return found
        level = below
    return found


def _is_socket(entry: os.DirEntry[str]) -> bool:
    if entry.is_file(follow_symlinks=False):
        return False
    return not entry.is_symlink() and stat.S_ISSOCK(entry.stat(follow_symlinks=False).st_mode)


def _kept_files(hidden: Iterable[Path]) -> list[Path]:
    """`/etc/resolv.conf`'s target when a hidden directory (`/run`) holds it."""
    try:
        resolv = Path("/etc/resolv.conf").resolve()
    except OSError:
        return []
    if resolv.is_file() and any(resolv.is_relative_to(h) for h in hidden):
        return [resolv]
    return []


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


def git_paths(workspace: Path) -> list[Path]:
    """The workspace's `.git`, directory or `gitdir:` file, kept read-only: its hooks and
    config (`core.fsmonitor`, filters, aliases) run later, outside the sandbox, and a `.git`
    file rewritten to point elsewhere would do the same. A `gitdir:` is never followed to
    make more writable, so commits are made outside the sandbox."""
    dot_git = workspace / ".git"
    found = [dot_git] if dot_git.exists() or dot_git.is_symlink() else []
    return [*found, *_nested_git_paths(workspace)]


def _nested_git_paths(workspace: Path) -> list[Path]:
    """The `.git` of repositories inside the workspace (submodules, vendored checkouts), a
    bounded look (`GIT_SCAN_DEPTH`, `GIT_SCAN_ENTRIES`) once per session."""
    found: list[Path] = []
    level = [workspace]
    seen = 0
    for _ in range(GIT_SCAN_DEPTH):
        below: list[Path] = []
        for directory in level:
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if seen > GIT_SCAN_ENTRIES:
                    return found
                if entry.name == ".git":
                    if directory != workspace:  # the workspace's own is listed already
                        found.append(Path(entry.path))
                elif entry.name in SOCKET_SCAN_SKIP or entry.is_symlink():
                    continue
                elif entry.is_dir(follow_symlinks=False):
                    below.append(Path(entry.path))
        level = below
    return found
