"""A seeded generator of shell command lines that try to hide one command behind another.

The commands mix lists, pipes, subshells, groups, substitutions, process substitution,
here-docs, comments and `#` inside words, every kind of quoting, wrappers, absolute paths,
`sh -c`, `eval`, `xargs`, `find -exec/-delete` and newlines. They only name files inside the
scratch directory they run in (see `oracle.py`), so running them is safe.
"""

from __future__ import annotations

import random

FILES = ("a", "b", "x", "y")
PROGRAMS = ("ls", "cat", "rm", "touch", "echo", "git", "grep", "head", "wc", "mkdir")
ABSOLUTE = {"rm": "/bin/rm", "touch": "/usr/bin/touch", "ls": "/bin/ls", "cat": "/usr/bin/cat"}
ARGS = {
    "ls": ("-la", "-1", "a", "sub", "a#", "'a#'", "\\#", "x#y", '"a b"'),
    "cat": ("a", "b", "x", "-n a", "a#"),
    "rm": ("-f x", "-rf x", "y", "a", "-f b", "-r sub"),
    "touch": ("PWNED", "new", "x", "'n;m'"),
    "echo": (
        "hi",
        "'; rm -f x'",
        '"a#b"',
        "\\;",
        "'$(rm x)'",
        '"$(touch q)"',
        "$'\\x3b touch z'",
        "a\\ b",
        "#c",
        "x#",
        "`touch bq`",
        "$((1+2))",
    ),
    "git": ("status", "status --short", "log -1", "push", "status; touch g"),
    "grep": ("-n a a", "x b", "-r a ."),
    "head": ("-1 a", "b"),
    "wc": ("-l a", "b"),
    "mkdir": ("newdir", "-p sub/deep"),
}
WRAPPERS = (
    "env",
    "env -i",
    "env FOO=1",
    "env -u HOME",
    "command",
    "nice",
    "nice -n 5",
    "nohup",
    "timeout 5",
    "timeout -s KILL 5",
    "stdbuf -oL",
    "ionice -c 3",
    "time",
    "time -p",
    "exec",
    "FOO=1",
    "LANG=C",
)
REDIRECTS = (
    "> out",
    ">> out",
    "2>/dev/null",
    ">/dev/null",
    "2>&1",
    ">&2",
    "< a",
    "<<< hi",
    "&> out2",
    ">&out3",
    ">| out4",
)


class Generator:
    """`Generator(seed).commands(n)` gives the same n commands for the same seed."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def commands(self, count: int) -> list[str]:
        return [self.statement(2) for _ in range(count)]

    # -- pieces -------------------------------------------------------------------------------

    def name(self, program: str) -> str:
        r = self.rng.random()
        if r < 0.55:
            return program
        if r < 0.62:
            return f"'{program}'"
        if r < 0.68:
            return f'"{program}"'
        if r < 0.73:
            return "\\" + program
        if r < 0.78:
            return f"'{program[0]}'{program[1:]}"
        if r < 0.83:
            return f"$'\\x{ord(program[0]):02x}{program[1:]}'"
        if r < 0.87:
            return program[0] + "\\" + program[1:]
        if program in ABSOLUTE:
            return ABSOLUTE[program]
        return program

    def simple(self) -> str:
        program = self.rng.choice(PROGRAMS)
        words = [self.name(program)]
        if self.rng.random() < 0.85:
            words.append(self.rng.choice(ARGS[program]))
        if self.rng.random() < 0.2:
            words.append(self.rng.choice(("a#", "#x", "\\#", "'#'", "b")))
        if self.rng.random() < 0.3:
            words.insert(0, self.rng.choice(WRAPPERS))
            if self.rng.random() < 0.2:
                words.insert(0, self.rng.choice(WRAPPERS[:12]))
        if self.rng.random() < 0.25:
            words.append(self.rng.choice(REDIRECTS))
        return " ".join(words)

    def quoted(self, code: str) -> str:
        if self.rng.random() < 0.6 or "'" not in code:
            return "'" + code.replace("'", "'\\''") + "'"
        escaped = code
        for char in ("\\", '"', "$", "`"):
            escaped = escaped.replace(char, "\\" + char)
        return f'"{escaped}"'

    def statement(self, depth: int) -> str:
        if depth <= 0:
            return self.simple()
        r = self.rng.random()
        inner = self.statement
        d = depth - 1
        if r < 0.25:
            return self.simple()
        if r < 0.45:
            op = self.rng.choice((";", "; ", " && ", " || ", " & ", " | ", " |& ", "\n", " ;\n"))
            return f"{inner(d)}{op}{inner(d)}"
        if r < 0.5:
            return f"( {inner(d)} )"
        if r < 0.54:
            return f"{{ {inner(d)}; }}"
        if r < 0.6:
            subst = self.rng.choice((f"$({inner(d)})", f"`{self.simple()}`", f'"$({inner(d)})"'))
            return f"{self.rng.choice(('echo', 'ls', 'cat'))} {subst}"
        if r < 0.63:
            return self.rng.choice(
                (f"cat <({inner(d)})", f"tee >({self.simple()}) < a", f"echo hi > >({inner(d)})")
            )
        if r < 0.68:
            return self.heredoc(d)
        if r < 0.73:
            shell = self.rng.choice(("sh -c", "bash -c", "eval", "bash -ec", "sh -c --"))
            return f"{shell} {self.quoted(inner(d))}"
        if r < 0.77:
            return self.xargs()
        if r < 0.81:
            return self.find()
        if r < 0.86:
            return self.comment(d)
        if r < 0.9:
            return self.control(d)
        if r < 0.93:
            return f"f() {{ {inner(d)}; }}; f"
        if r < 0.96:
            word = self.rng.choice(("a#", "a\\#", "x#;"))
            return f"ls {word}; {inner(d)}"
        return self.rng.choice(
            (
                f"(( 1 )) && {inner(d)}",
                f"X=$({self.simple()}) ls",
                f"[[ -f a ]] && {inner(d)}",
                f"echo $(( 2 + $(echo 1) )); {inner(d)}",
                f"{inner(d)} \\\n  a",
                f"case a in a) {inner(d)};; esac",
            )
        )

    def heredoc(self, depth: int) -> str:
        delimiter = self.rng.choice(("EOF", "'EOF'", '"EOF"', "-EOF"))
        plain = delimiter.strip("'\"-")
        body = self.rng.choice(
            ("hi $(touch hd)", "`rm -f x`", "a; rm x", "#c", "$(" + self.simple() + ")")
        )
        tail = self.rng.choice(("", " | cat", " > hdout", f"; {self.statement(depth)}"))
        return f"{self.rng.choice(('cat', 'rm', 'ls'))} <<{delimiter}{tail}\n{body}\n{plain}"

    def xargs(self) -> str:
        source = self.rng.choice(("echo x", "printf 'x\\ny\\n'", "echo status", "ls"))
        command = self.rng.choice(
            ("rm", "rm -f", "-I{} rm {}", "touch", "-n1 cat", "", "git", "-0 ls", "echo")
        )
        return f"{source} | xargs {command}".rstrip()

    def find(self) -> str:
        action = self.rng.choice(
            (
                "-delete",
                "-exec rm {} \\;",
                "-exec rm -f {} +",
                "-execdir touch fx \\;",
                "-exec ls {} \\;",
                "-exec cat {} +",
                "-print",
                "-fprint fout",
                "-exec sh -c 'rm -f \"$1\"' _ {} \\;",
            )
        )
        target = self.rng.choice(("x", "a", "nomatch", "'*'"))
        return f"find . -maxdepth 1 -name {target} {action}"

    def comment(self, depth: int) -> str:
        return self.rng.choice(
            (
                f"{self.simple()} # {self.statement(depth)}",
                f"{self.simple()} #{self.simple()}",
                f"# {self.simple()}\n{self.statement(depth)}",
                f"{self.simple()} a#; {self.statement(depth)}",
                f"{self.simple()} '#'; {self.statement(depth)}",
                f"{self.simple()}#; {self.statement(depth)}",
            )
        )

    def control(self, depth: int) -> str:
        body = self.statement(depth)
        return self.rng.choice(
            (
                f"if true; then {body}; fi",
                f"if false; then ls; else {body}; fi",
                f"for i in a b; do {body}; done",
                f"while false; do {body}; done",
                f"until true; do {body}; done",
                f"! {body}",
            )
        )
