"""What a shell command line would do, as far as permission rules care.

`ShellAnalysis` is the result of parsing one command line: every program it would run
(`Invocation`), every effect that no rule about a program can vouch for (a file written, a
variable such as PATH changed) and every reason it cannot be judged at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

Word = str | None
"""One argv word; None when its value is only known at run time."""

SYSTEM_DIRS = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/")
"""A program named by an absolute path in one of these is the program of that name."""

SAFE_VARIABLES = frozenset(
    {
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "COLUMNS",
        "LINES",
        "CI",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "RUST_BACKTRACE",
    }
)
CODE_VARIABLES = frozenset(
    {"PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "BASH_ENV", "ENV", "SHELLOPTS"}
)
"""Variables whose value bash itself may run as code (`PS4` under `set -x`, `BASH_ENV`)."""
_LOCAL_NAME = re.compile(r"^[a-z][a-z0-9]*$")


def assignment_is_harmless(name: str) -> bool:
    """Setting this variable cannot change which program runs or what it executes.

    Environment names that programs read (PATH, LD_PRELOAD, GIT_*, PAGER, BASH_ENV, ...) are
    open-ended, so only a short list of display/locale names and plain lower-case shell
    locals (`i`, `name`) count as harmless; `http_proxy`-style names contain `_` and do not.
    """
    return name in SAFE_VARIABLES or name.startswith("LC_") or bool(_LOCAL_NAME.match(name))


def program_name(word: str) -> str:
    """`/bin/rm` -> `rm`; any other path keeps its text (a local `./ls` is not `ls`)."""
    for prefix in SYSTEM_DIRS:
        if word.startswith(prefix) and "/" not in word[len(prefix) :]:
            return word[len(prefix) :]
    return word


def base_name(word: str) -> str:
    """The last path component: what a deny rule compares (`./x/rm` is caught by `rm`)."""
    return word.rstrip("/").rsplit("/", 1)[-1] or word


@dataclass(frozen=True)
class Invocation:
    """One program (or builtin) that the command line would run."""

    argv: tuple[Word, ...]
    open_tail: bool = False
    """More arguments are appended at run time (`xargs CMD`, `find -delete`)."""
    needs_allow: bool = True
    """False for wrappers and builtins with no effect of their own (`env`, `cd`, `true`):
    deny and ask rules still see them, but an allow rule need not name them."""
    opaque: bool = False
    """A program gosling does not know: it might run a program named in its arguments."""

    def describe(self) -> str:
        words = [w if w is not None else "<expansion>" for w in self.argv]
        return " ".join(words) + (" ..." if self.open_tail else "")


@dataclass
class ShellAnalysis:
    invocations: list[Invocation] = field(default_factory=list)
    effects: list[str] = field(default_factory=list)
    """What the command does beyond running its programs (writes `out.txt`, sets PATH)."""
    unknowns: list[str] = field(default_factory=list)
    """Why (part of) the command cannot be judged; non-empty means ask."""

    def merge(self, other: ShellAnalysis) -> None:
        self.invocations.extend(other.invocations)
        self.effects.extend(other.effects)
        self.unknowns.extend(other.unknowns)
