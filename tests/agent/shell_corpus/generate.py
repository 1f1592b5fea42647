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
TRICKS = (
    "ls;rm -f x",
    "ls&&touch t1",
    "ls|rm -f y",
    "ls a#;touch t2",
    "ls \\#;touch t3",
    "ls $'a\\'b';touch t4",
    "ls $'\\x3b' touch t5",
    "ls\\\ntouch t6",
    "ls \\\ntouch t7",
    "/bin/r? -f x",
    "r[m] -f x",
    "{rm,-f,x}",
    "$'rm' -f x",
    '$"rm" -f x',
    "env -- rm -f x",
    "command -- rm -f y",
    "nice -- rm -f x",
    "coproc rm -f x",
    "time -p rm -f y",
    "exec >out5; ls",
    "exec 3>out6",
    "local v=$(touch t8) 2>/dev/null; ls",
    "declare -a arr=($(touch t9))",
    "arr=(a $(rm -f x)); ls",
    "echo ${v:-$(touch t10)}",
    'echo "${v:-`rm -f y`}"',
    "case x in x) ls;;& *) touch t11;; esac",
    "ls |& touch t12",
    "#ls\ntouch t13",
    "ls '#';touch t14",
    'ls "#";rm -f y',
    "cat < <(touch t15)",
    "sh -c 'ls #'; touch t16",
    "sh -c 'ls' '#'; touch t17",
    'bash -c "ls a#; touch t18"',
    "eval 'ls a#;' touch t19",
    'eval "ls" \\; touch t20',
    "xargs -a a touch",
    "echo t21 | xargs -I % touch %",
    "find . -maxdepth 1 -name a -ok rm {} \\;",
    "find . -maxdepth 1 -name x -exec /bin/rm {} \\;",
    "timeout --signal=KILL 5 touch t22",
    "env -u HOME -C sub touch t23",
    "ls $(: ) ; touch t24",
    "[ -f a ] && touch t25",
    "test -f a || rm -f x",
    "! ls && touch t26",
    "if ls; then :; fi > out7",
    "{ ls; } 2>&1 > out8",
    "(ls) >> out9",
    "ls <> out10",
    "ls 1>&2 2>out11",
    "cat a >&- ; touch t27",
    "echo $((1 ? 2 : $(touch t28)))",
    "(( v = 1 )); touch t29",
    "echo ${v#`rm -f x`}",
    "echo ${v%%$(touch t30)}",
    'echo "${v:=`touch t31`}"',
    "echo ${v/a/`rm -f y`}",
    "echo $(( `echo 1` + 1 ))",
    "case $(touch t32) in *) ls;; esac",
    "case a in $(rm -f x)) ls;; esac",
    "for i in `touch t33`; do ls; done",
    "ls > `echo out12`",
    "cat <<< `rm -f y`",
    "v=`touch t34`; ls",
    "v=$'\\x60touch t35\\x60'; ls",
    "PS4='$(touch t36)' bash -xc ls",
    "v='$(rm -f x)'; echo ${v@P}",
    "BASH_ENV=<(echo touch t37) bash -c ls",
    "[[ $(touch t38) ]]; ls",
    "[[ 'a[$(rm -f y)]' -eq 0 ]]",
    "ls ${v:-'`rm -f x`'}",
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
        if self.rng.random() < 0.08:
            return self.rng.choice(TRICKS)
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
