"""The command prefix "always" offers for a shell call, as Claude Code offers
`Bash(git log:*)`: the program and, for programs with subcommands, the subcommand. The rule
is written in the permission checker's public format, `developer__shell(PREFIX)`, so the
checker decides what it covers (every part of a compound command must match, for one).

Nothing is offered where a prefix would allow far more than what was asked: compound
commands, redirections and substitutions, interpreters and wrappers that run any code
given to them (`python x.py` is offered whole, never `python`)."""

from __future__ import annotations

import re
import shlex

SUBCOMMAND_PROGRAMS = frozenset(
    {
        "git",
        "npm",
        "pnpm",
        "yarn",
        "cargo",
        "go",
        "docker",
        "kubectl",
        "pip",
        "pip3",
        "uv",
        "poetry",
        "make",
        "gh",
        "brew",
        "apt",
        "dotnet",
        "mvn",
        "gradle",
        "bundle",
        "rake",
        "terraform",
        "helm",
        "systemctl",
        "conda",
        "rustup",
        "deno",
        "bun",
    }
)
"""Programs whose second word names what they do (`git log`, `npm test`)."""
RUNS_ANY_CODE = frozenset(
    {
        "python",
        "python3",
        "node",
        "bash",
        "sh",
        "zsh",
        "fish",
        "dash",
        "perl",
        "ruby",
        "php",
        "env",
        "sudo",
        "doas",
        "xargs",
        "eval",
        "exec",
        "ssh",
        "nohup",
        "timeout",
        "nice",
        "npx",
        "uvx",
        "pipx",
        "command",
        "builtin",
        "source",
        ".",
        "watch",
        "time",
        "find",
        "awk",
        "sed",
        "busybox",
        "su",
        "chroot",
        "script",
        "parallel",
    }
)
"""Programs that run whatever their arguments say."""
DESTRUCTIVE = frozenset(
    {
        "rm",
        "rmdir",
        "mv",
        "cp",
        "dd",
        "chmod",
        "chown",
        "kill",
        "pkill",
        "killall",
        "shred",
        "truncate",
        "ln",
        "curl",
        "wget",
        "scp",
        "rsync",
        "mkfs",
        "mount",
        "umount",
        "reboot",
        "shutdown",
        "tee",
        "install",
        "git-push",
    }
)
"""Programs whose every use can destroy or send data away."""
EXACT_ONLY = RUNS_ANY_CODE | DESTRUCTIVE
"""For these only the exact command is offered, never the program alone."""
_SHELL_SYNTAX = re.compile(r"[;&|<>`\n]|\$\(|\$\{|\$[A-Za-z_]")


def offered_prefix(command: str) -> str | None:
    """The prefix to offer for "always", or None when none is safe to offer."""
    text = command.strip()
    if not text or _SHELL_SYNTAX.search(text):
        return None
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    if not words or "=" in words[0]:
        return None
    program = words[0].rsplit("/", 1)[-1]
    if program in EXACT_ONLY or program.startswith("python"):
        return shlex.join(words)
    if (
        program in SUBCOMMAND_PROGRAMS
        and len(words) > 1
        and re.fullmatch(r"[a-z][\w:-]*", words[1])
    ):
        return shlex.join(words[:2])
    return shlex.join(words[:1])


def shell_rule(tool_name: str, prefix: str) -> str:
    """The allow rule for `prefix` in the checker's public format."""
    return f"{tool_name}({prefix})"
