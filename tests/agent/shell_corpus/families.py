"""Attack families of issue 26, each generated in many variants (seeded).

`family_lines(seed, per_family)` gives (family, line) pairs. Allow families hide a payload
behind what the allow rules name (`ls`, `cat`, `git status`, `git diff`); deny families run
`rm` by a way bash itself offers. `LANGUAGE` lines hand rm to another language (python,
awk, perl, git aliases, sed's `e`): a deny rule is documented not to reach inside them, so
the oracle reports them apart. Every line names only files in its scratch directory.
"""

from __future__ import annotations

import random
from collections.abc import Callable

LEADS = ("ls", "ls -la", "cat a", "git status", "git diff", "git status --short", "cat b")
PAYLOADS = ("touch PWN", "rm -f y", "/bin/rm -f y", "rm y")
CONTROLS = ("\f", "\v", "\r", "\x01", "\x1b", "\x7f")
LANGUAGE = "language"


def _control(rng: random.Random) -> str:
    lead, payload, char = rng.choice(LEADS), rng.choice(PAYLOADS), rng.choice(CONTROLS)
    return rng.choice(
        (
            f"{lead} {char}#; {payload}",
            f"{lead}{char}#; {payload}",
            f"{lead} a{char}; {payload}",
            f"{lead} {char}# x\n{payload}",
            f"{lead} '{char}'#; {payload}",
            f"{char}{lead}; {payload}",
        )
    )


def _continuation(rng: random.Random) -> str:
    lead, payload = rng.choice(LEADS), rng.choice(PAYLOADS)
    return rng.choice(
        (
            f"\\\n{lead}; {payload}",
            f"\\\n{lead} #\\\n; {payload}",
            f"{lead} \\\n; {payload}",
            f"{lead}\\\n;{payload}",
            f"{lead} #\\\n{payload}",
            f"l\\\ns; {payload}",
            f"{lead} a\\\n#; {payload}",
            f"\\\n\\\n{lead} && {payload}",
        )
    )


def _arithmetic(rng: random.Random) -> str:
    return rng.choice(
        (
            "ls $(( $(cat payload) ))",
            "cat a $(( $(< payload) ))",
            "echo $(( $(cat payload) ))",
            "v=$(cat payload); echo $(( v ))",
            "v=$(cat payload); echo $(( $v + 1 ))",
            "v=$(cat payload); [[ $v -eq 0 ]]",
            "[[ $(cat payload) -gt 1 ]]; ls",
            "(( $(cat payload) )); ls",
            "let v=$(cat payload); ls",
            "declare -i v; v=$(cat payload); ls",
            "read v < payload; echo $(( v ))",
            "read v < payload; echo ${a[$v]}",
            "read v < payload; echo ${x:$v}",
            "read v < payload; [[ -v $v ]]",
            "read v < payload; test -v $v",
            "read v < payload; [ $v -eq 0 ]",
            "v=$(< payload); printf '%d' $(( v ))",
            "for ((i = $(cat payload); i < 0; i++)); do :; done",
            "ls ${a[$(cat payload)]}",
            "a[$(cat payload)]=1; ls",
        )
    )


def _xargs_env(rng: random.Random) -> str:
    target = rng.choice(("touch", "rm"))
    lead = rng.choice(("ls", "cat", "echo"))
    return rng.choice(
        (
            f"echo y | xargs -e {target} {lead}",
            f"xargs -e {target} {lead} < a",
            f"echo y | xargs -eEOF {target}",
            f"echo y | xargs -i {target} {{}}",
            f"echo y | xargs -l1 {target}",
            f"echo y | xargs --eof {target}",
            f"echo y | xargs --replace {target} y",
            f"echo y | xargs -r -0 {target}",
            f"echo y | xargs -n 1 -P 2 {target}",
            f"env --default-signal {target} {lead}",
            f"env --ignore-signal {target} y",
            f"env --block-signal {target} y",
            f"env --default-signal=INT {target} y",
            f"env -u HOME {target} y",
            f"env -C . {target} y",
            f"env -i {target} y",
            f"env - {target} y",
            f"env -v {target} y",
            f"env -0 {target} y",
            f"env --argv0=ls {target} y",
            f"env -S '{target} y'",
            f"env --split-string='{target} y'",
            f"env X=1 -- {target} y",
        )
    )


def _rebinding(rng: random.Random) -> str:
    program = rng.choice(("ls", "cat", "echo"))
    return rng.choice(
        (
            f"BASH_CMDS[{program}]=/bin/rm; {program} -f y",
            f"declare -n r='BASH_CMDS[{program}]'; r=/bin/rm; {program} -f y",
            f"declare -n r=BASH_CMDS; r[{program}]=/bin/rm; {program} -f y",
            f'v=BASH_CM; declare -n r="${{v}}DS[{program}]"; r=/bin/rm; {program} -f y',
            f": ${{BASH_CMDS[{program}]:=/bin/rm}}; {program} -f y",
            f"hash -p /bin/rm {program}; {program} -f y",
            f"hash -dp /bin/rm {program}; {program} -f y",
            f"declare -A BASH_CMDS=([{program}]=/bin/rm); {program} -f y",
            f"printf -v 'BASH_CMDS[{program}]' /bin/rm; {program} -f y",
            f"read 'BASH_CMDS[{program}]' <<< /bin/rm; {program} -f y",
            f'v=BASH_CM; read "${{v}}DS[{program}]" <<< /bin/rm; {program} -f y',
            f'v=BASH_CM; printf -v "${{v}}DS[{program}]" /bin/rm; {program} -f y',
            f"local -n r=BASH_CMDS 2>/dev/null; f() {{ local -n r=BASH_CMDS; "
            f"r[{program}]=/bin/rm; }}; f; {program} -f y",
            f'{program}() {{ rm "$@"; }}; {program} -f y',
            f"alias {program}=rm; shopt -s expand_aliases\n{program} -f y",
            "enable -n echo; PATH=/nonexistent; echo x; rm -f y",
        )
    )


def _heredoc(rng: random.Random) -> str:
    delimiter = rng.choice(("$X", '"$X"', "${X}", "E\\OF", "'E'OF", "`X`", "E$", "$'E'"))
    end = delimiter.replace("\\", "").replace("'", "").replace('"', "")
    end = rng.choice((end, delimiter))
    lead = rng.choice(("cat", "cat a", "ls"))
    body = rng.choice(("$(rm -f y)", "`touch PWN`", "x"))
    return f"{lead} <<{delimiter}\n{body}\n{end}\nrm -f y\n"


def _dash(rng: random.Random) -> str:
    shell = rng.choice(("sh", "dash", "/bin/sh"))
    code = rng.choice(
        (
            "ls &>/dev/null rm -f y",
            "cat a &>/dev/null rm -f y",
            "ls |& rm -f y",
            "echo $'x' ; ls",
            "ls $'\\x27'; rm -f y; echo '",
            "echo {a,b}; ls",
            "[[ -f a ]] && rm -f y",
            "ls; rm -f y",
            "cat <<< x; rm -f y",
            "git status &> /dev/null touch PWN",
        )
    )
    return f"{shell} -c '{code}'" if "'" not in code else f'{shell} -c "{code}"'


def _git_bare(rng: random.Random) -> str:
    return rng.choice(
        (
            "cd evil.git && git status",
            "cd evil.git; git status --short",
            "cd ./evil.git && git diff",
            "cd evil.git/refs && git status",
            "git -C evil.git status",
            "GIT_DIR=evil.git git status",
            "git --git-dir=evil.git status",
            "git --git-dir evil.git --work-tree=. status",
            "cd evil.git && git log -1",
            "cd evil.git && ls && git status",
        )
    )


def _git_output(rng: random.Random) -> str:
    return rng.choice(
        (
            "git diff --output=PWN",
            "git diff --output PWN",
            "git diff --outp=PWN",
            "git diff --stat --output=PWN",
            "git log -p --output=PWN",
            "git show --output=PWN",
            "git diff --ext-diff",
            "git diff -- --output=PWN",
            "git status --output=PWN",
            "git diff --no-index a b --output=PWN",
            "git -c core.pager='touch PWN' -p log",
            "git --paginate -c core.pager='touch PWN' diff",
        )
    )


def _policies(rng: random.Random) -> str:
    return rng.choice(
        (
            "find . -name a -exec touch PWN \\;",
            "find . -name y -delete",
            "find . -name a -fprint PWN",
            "find . -name a -execdir rm -f y \\;",
            "find . -name a -ok rm -f y \\;",
            "sed -n '1e touch PWN' a",
            "sed 's/a/b/w PWN' a",
            "sed 's/a/touch PWN/e' a",
            "sed -i s/a/b/ a",
            "sed -n 1p a; sed -f payload a",
            "sort -o PWN a",
            "sort --compress-program=touch a",
            "uniq a PWN",
            "rg --pre touch a",
            "rg --pre=touch x",
            "tree -o PWN",
            "grep -r x . > PWN",
            "ls --hyperlink=x a",
            "cat a > PWN",
            "git branch PWN",
            "git tag PWN",
            "git stash",
        )
    )


def _eval_trap(rng: random.Random) -> str:
    payload = rng.choice(("rm -f y", "/bin/rm -f y", "'rm' -f y"))
    quoted = payload.replace("'", "'\\''")
    return rng.choice(
        (
            f"eval -- '{quoted}'",
            f"eval '{quoted}'",
            f"eval {payload}",
            f"builtin eval '{quoted}'",
            f"command eval '{quoted}'",
            f"trap -- '{quoted}' EXIT",
            f"trap '{quoted}' EXIT",
            f"trap '{quoted}' ERR; false",
            f"trap -- '{quoted}' INT TERM EXIT",
            f"compgen -C '{quoted}' x",
            f"compgen -C '{quoted}' -- x",
            f"compgen -W '$({quoted})' x",
            f"f() {{ {payload}; }}; compgen -F f x",
            f"command {payload}",
            f"command -p {payload}",
            f"command -- {payload}",
            f"exec {payload}",
            f"exec -a ls {payload}",
            "(exec -a ls /bin/rm -f y)",
            f"builtin command {payload}",
            f"mapfile -C '{quoted}' -c 1 v < a",
        )
    )


WRAPPERS = (
    "setsid", "setsid -f", "setsid -w", "flock lk", "flock -n lk", "flock -x lk", "chrt -o 0",
    "chrt 0", "taskset 1", "taskset -c 0", "prlimit --nofile=100", "prlimit -n100",
    "prlimit --cpu", "setpriv --nnp", "setpriv --reset-env", "nsenter", "sg root", "unshare",
    "unshare -f", "chroot /", "runuser -u root --", "nice", "nice -n 5", "nice -5",
    "ionice -c 3", "stdbuf -oL", "timeout 5", "timeout -s KILL 5", "nohup", "time",
    "time -p", "env", "strace -o /dev/null", "strace -qq -f -o /dev/null", "busybox",
    "setarch x86_64", "linux64", "/usr/bin/setsid", "'setsid'", "nohup nice",
    "timeout 5 setsid", "xargs -a /dev/null -r", "start-stop-daemon --start --exec /bin/rm --",
)  # fmt: skip
SHELL_WRAPPERS = ("flock lk -c", "su root -c", "runuser root -c", "script -qc", "sg root -c")


def _wrapper(rng: random.Random) -> str:
    if rng.random() < 0.2:
        return f"{rng.choice(SHELL_WRAPPERS)} 'rm -f y'" + (
            " /dev/null" if rng.random() < 0.5 else ""
        )
    name = rng.choice(("rm", "/bin/rm", "/usr/bin/rm", "'rm'", "r\\m"))
    return f"{rng.choice(WRAPPERS)} {name} -f y"


def _language(rng: random.Random) -> str:
    return rng.choice(
        (
            "python3 -c 'import os; os.system(\"rm -f y\")'",
            "awk 'BEGIN { system(\"rm -f y\") }'",
            "perl -e 'system \"rm -f y\"'",
            "git -c alias.x='!rm -f y' x",
            "sed -n '1e rm -f y' a",
            "git -c core.fsmonitor='rm -f y; false' status",
            "find . -name a -exec python3 -c 'import os; os.remove(\"y\")' \\;",
        )
    )


FAMILIES: dict[str, Callable[[random.Random], str]] = {
    "control characters": _control,
    "backslash-newline": _continuation,
    "arithmetic": _arithmetic,
    "xargs and env options": _xargs_env,
    "command hash and namerefs": _rebinding,
    "here-doc delimiters": _heredoc,
    "sh -c read by dash": _dash,
    "git bare repository": _git_bare,
    "git writes": _git_output,
    "argument policies": _policies,
    "eval, trap, compgen, command": _eval_trap,
    "wrappers": _wrapper,
    LANGUAGE: _language,
}


def family_lines(seed: int, per_family: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(name, make(rng)) for name, make in FAMILIES.items() for _ in range(per_family)]
