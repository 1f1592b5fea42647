"""What a sandboxed tool process may touch, and the bubblewrap command line that enforces it.

Everything here is pure: `bwrap_argv` turns a `SandboxPolicy` and a command into the argv to
run, so the rules can be read and tested without starting a process.

The layout inside the sandbox:
- `/` read-only (the user's tools, libraries and the project stay usable);
- a fresh `/dev`, a fresh `/proc` of a private PID namespace (no `/proc/<pid>/environ` or
  `cmdline` of gosling, the user's shell or anything else outside), mounted read-only: its
  host-wide knobs (`/proc/sys`, `/proc/sysrq-trigger`, `/proc/irq`, `/proc/bus`, ...) check
  only the owner bits when gosling runs as root, which no capability drop changes;
- a private `/tmp`: the session's own directory when the policy names one (what one command
  leaves in `/tmp` is there for the session's next, as on a real machine), else an empty one
  per process;
- the workspace writable (`workspace-write`) or read-only (`read-only`), its `.git` always
  read-only (hooks and config would run later, outside the sandbox), plus any extra writable
  directories the policy names (an MCP server's own cache);
- hidden behind empty mounts of the sandbox's own: gosling's own config, data and state, the user's
  credential files and directories, and the directories holding host unix sockets (`/run`,
  `$XDG_RUNTIME_DIR`, those found under `$HOME`): a socket on a read-only mount still
  accepts connections;
- a user namespace (no capability over anything of the host's; bwrap maps root to root,
  so the read-only knobs above are what keeps root's files safe) that cannot nest another,
  and no capabilities (`--cap-drop ALL`);
- no unix sockets: a seccomp filter refuses `socket(AF_UNIX)` (`seccomp`), so a socket the
  hiding missed (directly in `$HOME` or the workspace, created later) is out of reach too;
- no network unless the policy allows it; `--die-with-parent` so that nothing in the sandbox
  outlives gosling, and `--new-session` so a command cannot push keystrokes into the
  user's terminal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gosling.agent.sandbox.seccomp import SECCOMP_FD
from gosling.redact import is_credential_env

SandboxMode = Literal["off", "read-only", "workspace-write"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("off", "read-only", "workspace-write")
STRICTNESS: Mapping[str, int] = {"off": 0, "workspace-write": 1, "read-only": 2}
"""Higher is stricter; a project file may only move the sandbox up this scale."""

PRIVATE_TMP = ("/tmp", "/var/tmp")
CALL_MARKER_VAR = "GOSLING_TOOL_PROCESS"
"""Set in every tool process's environment to a per-call token, so that processes which left
the call's process group (`setsid`, double forks) can still be found and stopped."""


@dataclass(frozen=True)
class SandboxPolicy:
    """A sandbox that is in force (mode is never "off" here)."""

    mode: Literal["read-only", "workspace-write"]
    workspace: Path
    """The project root: writable in `workspace-write`, read-only otherwise."""
    network: bool = False
    writable: tuple[Path, ...] = ()
    """Further directories that stay writable (they must exist): an MCP server's cache."""
    read_only: tuple[Path, ...] = ()
    """Paths inside the workspace that stay read-only (its `.git`, file or directory)."""
    hidden: tuple[Path, ...] = ()
    """Directories replaced by an empty one of the sandbox's own (a tmpfs): gosling's own
    config, data and state, credential directories, and directories holding host unix
    sockets."""
    hidden_files: tuple[Path, ...] = ()
    """Files replaced by an empty one (`/dev/null`, read-only): credential files."""
    kept: tuple[Path, ...] = ()
    """Files inside a hidden directory that stay visible, read-only: `/etc/resolv.conf`'s
    target under `/run`, without which no name resolves even with the network on."""
    readable: tuple[Path, ...] = ()
    """Entries of `/tmp` or `/var/tmp` that stay visible, read-only, over the private one:
    the user's toolchain when it lives there (a venv on PATH, gosling's own), and the host
    entries a shell command names (`named_tmp`)."""
    tmp: Path | None = None
    """A host directory mounted at `/tmp` (the session's, `agent.tools.spill.session_tmp_dir`);
    None: an empty `/tmp` per process."""
    bwrap: str = "bwrap"
    """The bubblewrap executable."""
    server_caches: Path | None = None
    """Where each MCP server gets a writable cache of its own (`choice.server_cache`)."""
    user_namespace: bool = True
    """Run in a new user namespace (`bwrap_status` says whether this machine allows one)."""
    no_nested_userns: bool = True
    """...which cannot create another one (`--disable-userns`, bwrap 0.8 and later)."""
    seccomp: Path | None = None
    """The compiled filter that refuses unix sockets (`seccomp.filter_file`); None: none
    for this machine, and only the hidden directories keep host sockets away."""


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def bwrap_argv(policy: SandboxPolicy, argv: Sequence[str], *, cwd: Path) -> list[str]:
    """The command line that runs `argv` in `cwd` under `policy`.

    Mount order matters (later mounts cover earlier ones): the private tmp comes before the
    workspace so that a workspace under /tmp stays visible; `.git` is made read-only after
    the workspace; the hidden paths come after both (a credential file inside the workspace
    stays hidden), unless they contain the workspace; the writable extras come last, so an
    MCP server's cache under gosling's hidden state directory is still writable.
    """
    args = [policy.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    # All of the fresh /proc read-only: /proc/sys, /proc/sysrq-trigger, /proc/irq,
    # /proc/bus... act on the whole host and check only owner bits (root's, when gosling
    # runs as root). One remount covers every knob a kernel has, listed here or not.
    args += ["--remount-ro", "/proc"]
    for tmp in PRIVATE_TMP:
        if tmp == "/tmp" and policy.tmp is not None:
            args += ["--bind", str(policy.tmp), tmp]
        else:
            args += ["--tmpfs", tmp]
    for tool_dir in policy.readable:
        if not _inside(tool_dir, policy.workspace):
            args += ["--ro-bind", str(tool_dir), str(tool_dir)]
    workspace_bind = "--bind" if policy.mode == "workspace-write" else "--ro-bind"
    args += [workspace_bind, str(policy.workspace), str(policy.workspace)]
    if policy.mode == "workspace-write":
        for path in policy.read_only:
            args += ["--ro-bind", str(path), str(path)]
    for hidden in policy.hidden:
        if _inside(policy.workspace, hidden) or _inside(cwd, hidden):
            continue
        # An empty tmpfs of the sandbox's own: what a command writes there is gone with
        # it. Not remounted read-only, which costs bwrap a pass over the mount table.
        args += ["--tmpfs", str(hidden)]
        for kept in policy.kept:
            if _inside(kept, hidden):
                args += ["--ro-bind-try", str(kept), str(kept)]
    for hidden_file in policy.hidden_files:
        args += ["--ro-bind", "/dev/null", str(hidden_file)]
    for extra in policy.writable:
        if policy.mode == "read-only" and _inside(extra, policy.workspace):
            continue
        args += ["--bind", str(extra), str(extra)]
    if policy.user_namespace:
        args.append("--unshare-user")
        if policy.no_nested_userns:
            args.append("--disable-userns")
    args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    if not policy.network:
        args.append("--unshare-net")
    args += ["--cap-drop", "ALL", "--die-with-parent", "--new-session"]
    if policy.seccomp is not None:
        # sh opens the filter on fd 3 for bwrap; if it cannot, nothing runs.
        args[:0] = ["/bin/sh", "-c", 'exec 3<"$0" && exec "$@"', str(policy.seccomp)]
        args += ["--seccomp", str(SECCOMP_FD)]
    args += ["--chdir", str(cwd), "--", *argv]
    return args


def tool_environment(
    base: Mapping[str, str], *, keep: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`base` without any credential-like variable, plus `keep` (set explicitly by the user,
    e.g. an MCP server's configured `env`), with prompts for git credentials turned off."""
    env = {k: v for k, v in base.items() if not is_credential_env(k, v)}
    env.update(keep or {})
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env
