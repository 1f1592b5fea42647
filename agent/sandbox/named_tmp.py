"""Host `/tmp` files a command names, made readable over the sandbox's private `/tmp`.

A sandboxed command's `/tmp` is the session's own (what one command leaves there is there for
the next, never in the machine's `/tmp`), which would hide the log the user just pointed at:
`cat /tmp/build.log`. Showing all of the host's `/tmp` costs a mount per entry on every
command; so only the entries a command names are shown, read-only: for each word of the
command line that is a path under `/tmp` or `/var/tmp`, its top entry there (`/tmp/build.log`,
or `/tmp/logs` for `/tmp/logs/today.txt`), when it exists on the host.

Never shown: an entry that is a socket; one whose real path leaves the tmp dir (a symlink to
`~/.ssh/id_rsa`) or lands in a hidden location (gosling's state, credentials,
`sandbox_hide`); the tmp dir itself. At most `MAX_NAMED` entries per command. Where the
session's `/tmp` has a file of the same name, the host's is the one shown (bubblewrap leaves
an empty file there as the mount point).
"""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Iterable
from pathlib import Path

from gosling.agent.sandbox.policy import PRIVATE_TMP

MAX_NAMED = 16


def named_tmp_entries(command: str, *, hidden: Iterable[Path] = ()) -> list[Path]:
    """The host tmp entries `command` names that may be shown read-only (module docstring)."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    blocked = [Path(os.path.realpath(p)) for p in hidden]
    found: dict[Path, None] = {}
    for word in words:
        for piece in word.split("="):  # --log=/tmp/x, VAR=/tmp/x
            entry = _top_entry(piece)
            if entry is None or entry in found:
                continue
            if _showable(entry, blocked):
                found[entry] = None
            if len(found) >= MAX_NAMED:
                return list(found)
    return list(found)


def _top_entry(word: str) -> Path | None:
    for tmp in PRIVATE_TMP:
        if word.startswith(tmp + "/"):
            name = word[len(tmp) + 1 :].split("/", 1)[0]
            if name and name not in (".", "..") and not any(c in name for c in "*?[$`"):
                return Path(tmp) / name
    return None


def _showable(entry: Path, blocked: list[Path]) -> bool:
    try:
        mode = os.lstat(entry).st_mode
        real = Path(os.path.realpath(entry))
        real_mode = os.stat(real).st_mode
    except OSError:
        return False
    if stat.S_ISSOCK(mode) or stat.S_ISSOCK(real_mode):
        return False
    tmp_dirs = [Path(os.path.realpath(t)) for t in PRIVATE_TMP]
    if not any(real != t and real.is_relative_to(t) for t in tmp_dirs):
        return False  # a link out of the tmp dir
    return not any(real.is_relative_to(b) or b.is_relative_to(real) for b in blocked)
