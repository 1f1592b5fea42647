"""See through the programs that run other programs: `env rm x` runs `rm`.

`analyse_argv` turns one simple command's argv into the invocations that deny and ask rules
judge. Wrappers (`shell_wrapper_specs`: `env`, `xargs`, `sudo`, `setsid`, `flock`, `chrt`,
`nsenter`, ...) are peeled with their own options; shells given `-c STRING`, `eval`, `trap`
and `compgen -C` have their code parsed again; `find -exec CMD ;` adds `CMD`, and `find
-delete` counts as running `rm`. A wrapper option we do not know, code we cannot see (`bash
script.sh`, `source f`, `sh -c "$X"`), a name rebound (`hash -p`, `declare -n`) or code for a
shell that reads it otherwise than bash makes the command unjudgeable. A program gosling
does not know is marked `opaque`: it might be a wrapper, so a deny rule asks when it is
handed the rule's program name or a word only known at run time.
"""

from __future__ import annotations

from collections.abc import Callable

from gosling.agent.permissions.shell_model import (
    CODE_VARIABLES,
    Invocation,
    ShellAnalysis,
    Word,
    assignment_is_harmless,
    base_name,
    program_name,
)
from gosling.agent.permissions.shell_policies import PROGRAMS
from gosling.agent.permissions.shell_policy_check import OptionTable, table
from gosling.agent.permissions.shell_wrapper_specs import (
    BASH_COMPATIBLE,
    DASH_DIFFERENT,
    POSIX_SHELLS,
    SHELLS,
    SPECS,
    WrapperSpec,
)

ParseFn = Callable[[str, int], ShellAnalysis]
"""Parse a nested code string (`sh -c`, `eval`) at a nesting depth."""

NEUTRAL = frozenset({"cd", "pushd", "popd", "true", "false", ":", "pwd", "echo", "test", "["})
"""Builtins with no effect beyond the shell itself: no allow rule needs to name them."""
OPAQUE = frozenset({"source", ".", "fc", "alias", "enable", "complete", "bind"})
"""Builtins that run code we cannot see, or change what a later name runs (`alias ls=rm`
with expand_aliases, `enable -f lib.so`, `complete -C`)."""
REBINDING = {"shopt": "expand_aliases", "mapfile": "-C", "readarray": "-C"}
"""Builtins that, given this word, rebind a name or run a callback string."""
NAMING = frozenset(
    {"read", "printf", "mapfile", "readarray", "getopts", "unset", "let", "wait", "export"}
)
"""Builtins that take variable names: a name only known at run time could be BASH_CMDS."""
NOT_WRAPPERS = frozenset(
    {
        *PROGRAMS,
        *NEUTRAL,
        *NAMING,
        "git", "mkdir", "touch", "cp", "mv", "rm", "chmod", "ln", "python", "python3",
        "node", "npm", "pip", "pip3", "pytest", "cargo", "go", "uv", "ruff", "mypy", "rmdir",
        "kill", "exit", "return", "shift", "set", "unalias", "type", "hash", "declare",
        "typeset", "local", "readonly", "umask", "sleep", "tee", "curl", "wget",
    }
)  # fmt: skip
"""Programs known not to run a program named in their arguments."""
GIT_ELSEWHERE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--config-env", "--exec-path"})
"""git options after which a repository's (or the line's) config decides what git runs."""
FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
FIND_WRITES = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})
_CODE_RUNNERS = frozenset({"eval", "trap", "compgen"})


class Unjudgeable(Exception):
    """The argv cannot be judged; the message says why."""


def skip_options(
    args: list[Word], options: OptionTable, *, numeric: bool = False
) -> tuple[int, dict[str, Word]]:
    """Index of the first operand in `args` and the options seen (name -> value or "").
    Options end at the first operand, as they do for wrappers."""
    seen: dict[str, Word] = {}
    index = 0
    while index < len(args):
        word = args[index]
        if word is None:
            raise Unjudgeable("a wrapper option is only known at run time")
        if word == "--":
            return index + 1, seen
        if not word.startswith("-") or (word == "-" and "-" not in options.flags):
            return index, seen
        if word == "-" or word in options.flags:
            seen[word] = ""
            index += 1
            continue
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if name in options.valued:
                if not eq:
                    index += 1
                    if index >= len(args):
                        raise Unjudgeable(f"option {name} has no value")
                    value = args[index] or ""
                seen[name] = value
            elif name in options.optional or (name in options.flags and not eq):
                seen[name] = value
            else:
                raise Unjudgeable(f"unknown option {word!r}")
            index += 1
            continue
        if numeric and word[1:].isdigit():
            index += 1
            continue
        index = _short_options(args, index, options, seen)
    return index, seen


def _short_options(
    args: list[Word], index: int, options: OptionTable, seen: dict[str, Word]
) -> int:
    word = args[index] or ""
    for position in range(1, len(word)):
        letter = f"-{word[position]}"
        rest = word[position + 1 :]
        if letter in options.flags:
            seen[letter] = ""
            continue
        if letter in options.optional:
            seen[letter] = rest
            return index + 1
        if letter in options.valued:
            if rest:
                seen[letter] = rest
                return index + 1
            if index + 1 >= len(args):
                raise Unjudgeable(f"option {letter} has no value")
            seen[letter] = args[index + 1]
            return index + 2
        raise Unjudgeable(f"unknown option {word!r}")
    return index + 1


def analyse_argv(argv: list[Word], depth: int, parse: ParseFn) -> ShellAnalysis:
    """The invocations, effects and unknowns of one simple command's argv."""
    out = ShellAnalysis()
    try:
        _expand(argv, depth, parse, out, open_tail=False)
    except Unjudgeable as error:
        out.unknowns.append(str(error))
    return out


def _expand(
    argv: list[Word], depth: int, parse: ParseFn, out: ShellAnalysis, *, open_tail: bool
) -> None:
    while argv:
        name = argv[0]
        if name is None:
            raise Unjudgeable("the program name is only known at run time")
        # A wrapper elsewhere than a system dir (`./env`) is still seen through, so deny
        # rules catch what it runs, but an allow rule must name the file itself.
        program = base_name(name)
        local = program_name(name) != program
        spec = SPECS.get(program)
        if spec is None:
            _program(program, argv, depth, parse, out, open_tail=open_tail, local=local)
            return
        out.invocations.append(
            Invocation(tuple(argv), open_tail, needs_allow=local or spec.own_allow)
        )
        rest = _unwrap(program, spec, argv[1:], depth, parse, out)
        if rest is None:
            return
        if program == "xargs":
            rest, open_tail = _xargs_command(rest, argv[1:])
        argv = rest


def _unwrap(
    program: str,
    spec: WrapperSpec,
    args: list[Word],
    depth: int,
    parse: ParseFn,
    out: ShellAnalysis,
) -> list[Word] | None:
    """The command a wrapper runs, or None when it runs none (or only code parsed here)."""
    if program == "busybox":
        return args or None
    start, seen = skip_options(args, table(spec.options), numeric=spec.numeric)
    if spec.no_command & seen.keys():
        return None
    rest = args[start + spec.operands :]
    if program in ("flock", "sg") and rest[:1] in (["-c"], ["--command"]):
        seen["-c"] = rest[1] if len(rest) > 1 else None
        rest = rest[2:] if program == "flock" else rest[1:]
    if spec.code_option is not None and ("-c" in seen or "--command" in seen):
        code = seen.get("-c", seen.get("--command"))
        _code([code], f"{program} -c", depth, parse, out, shell="sh")
        return None
    if program == "env":
        rest = _env_operands(rest, seen, out)
    if program in ("su", "runuser") and not ({"-u", "--user"} & seen.keys()):
        if rest:
            raise Unjudgeable(f"{program} runs a login shell or a user's command")
        return None
    if spec.joined and rest and not ({"-x", "--exec"} & seen.keys()):
        _code(rest, f"{program}'s command", depth, parse, out, shell="sh")
        return None
    if program in ("sudo", "doas") and ({"-s", "-i", "--login", "--shell"} & seen.keys()):
        raise Unjudgeable(f"{program} runs a shell")
    return rest or None


def _env_operands(rest: list[Word], seen: dict[str, Word], out: ShellAnalysis) -> list[Word]:
    if "-S" in seen or "--split-string" in seen:
        raise Unjudgeable("env -S splits a string into a command")
    while rest and rest[0] is not None and "=" in rest[0] and not rest[0].startswith("="):
        variable = rest[0].split("=", 1)[0]
        if variable in CODE_VARIABLES or variable.startswith("BASH_FUNC_"):
            raise Unjudgeable(f"it sets {variable}, whose value bash may run")
        if not assignment_is_harmless(variable):
            out.effects.append(f"it sets {variable} for the program")
        rest = rest[1:]
    if rest and rest[0] is None:
        raise Unjudgeable("env's operand is only known at run time")
    return rest


def _xargs_command(rest: list[Word], args: list[Word]) -> tuple[list[Word], bool]:
    _, seen = skip_options(args, table(SPECS["xargs"].options))
    command = rest or ["echo"]
    replace = next((seen[k] for k in ("-I", "-i", "--replace") if k in seen), None)
    if replace is None:
        return command, True
    marker = replace or "{}"
    return [None if w is None or marker in w else w for w in command], False


def _program(
    program: str,
    argv: list[Word],
    depth: int,
    parse: ParseFn,
    out: ShellAnalysis,
    *,
    open_tail: bool,
    local: bool,
) -> None:
    """A program that is not a wrapper: itself, plus any code it is handed to run."""
    transparent = program in NEUTRAL or program in SHELLS or program in _CODE_RUNNERS
    needs_allow = local or not transparent
    opaque = program not in NOT_WRAPPERS and program not in SHELLS | _CODE_RUNNERS
    out.invocations.append(
        Invocation(tuple(argv), open_tail, needs_allow=needs_allow, opaque=opaque)
    )
    args = argv[1:]
    if program in OPAQUE:
        raise Unjudgeable(f"{program} runs or binds code that cannot be seen")
    marker = REBINDING.get(program)
    if marker is not None and any(w is None or w.startswith(marker) for w in args):
        raise Unjudgeable(f"{program} {marker} changes what a later command runs")
    if program == "printf":
        if args and (args[0] is None or args[0].startswith("-v")):
            raise Unjudgeable("printf -v assigns to a variable")
    elif program in NAMING and any(w is None for w in args):
        raise Unjudgeable(f"{program} is given a name only known at run time")
    if program == "hash" and any(w is None or w.startswith("-") for w in args):
        raise Unjudgeable("hash with options can bind a name to another program")
    if program in ("test", "[") and "-v" in args:
        raise Unjudgeable(f"{program} -v evaluates a subscript")
    if program == "git" and any(_points_git_elsewhere(w) for w in args):
        raise Unjudgeable("git pointed at another repository or config, which may run code")
    if program in SHELLS:
        _shell(program, args, depth, parse, out)
    elif program == "eval":
        _code(args[1:] if args[:1] == ["--"] else args, "eval", depth, parse, out)
    elif program == "trap":
        _trap(args, depth, parse, out)
    elif program == "compgen":
        _compgen(args, depth, parse, out)
    elif program == "find":
        _find(args, depth, parse, out)


def _points_git_elsewhere(word: Word) -> bool:
    if word is None:
        return False
    name = word.split("=", 1)[0]
    return name in GIT_ELSEWHERE or (word.startswith("-c") and not word.startswith("--"))


def _trap(args: list[Word], depth: int, parse: ParseFn, out: ShellAnalysis) -> None:
    if args and args[0] in ("-p", "-l", "-P"):
        return
    if args[:1] == ["--"]:
        args = args[1:]
    if args and args[0] is not None and args[0].startswith("-") and args[0] != "-":
        raise Unjudgeable(f"trap option {args[0]!r}")
    if args and args[0] != "-":
        _code(args[:1], "trap", depth, parse, out)


def _compgen(args: list[Word], depth: int, parse: ParseFn, out: ShellAnalysis) -> None:
    """`compgen -C CMD` runs CMD, `-F f` a function, `-W WORDS` expands its words."""
    for index, word in enumerate(args):
        if word is None:
            raise Unjudgeable("compgen is given a word only known at run time")
        if word.startswith("-") and ("F" in word or "W" in word):
            raise Unjudgeable("compgen -F/-W runs or expands code")
        if word.startswith("-") and "C" in word:
            attached = word[word.index("C") + 1 :]
            code = attached or (args[index + 1] if index + 1 < len(args) else None)
            _code([code], "compgen -C", depth, parse, out)


def _code(
    words: list[Word],
    what: str,
    depth: int,
    parse: ParseFn,
    out: ShellAnalysis,
    *,
    shell: str = "bash",
) -> None:
    if any(w is None for w in words):
        raise Unjudgeable(f"{what}'s code is only known at run time")
    code = " ".join(w for w in words if w is not None)
    if shell in POSIX_SHELLS and any(token in code for token in DASH_DIFFERENT):
        raise Unjudgeable(f"{what}'s code holds syntax that {shell} reads otherwise than bash")
    out.merge(parse(code, depth + 1))


def _shell(program: str, args: list[Word], depth: int, parse: ParseFn, out: ShellAnalysis) -> None:
    """`bash -c STRING`: parse STRING; a shell reading a script or stdin cannot be judged."""
    if program not in BASH_COMPATIBLE and program not in POSIX_SHELLS:
        raise Unjudgeable(f"{program} reads its code otherwise than bash")
    index = 0
    has_c = False
    while index < len(args):
        word = args[index]
        if word is None:
            raise Unjudgeable(f"{program}'s arguments are only known at run time")
        if word == "--":
            index += 1
            break
        if word in ("-o", "+o", "-O", "+O"):
            index += 2
            continue
        if word.startswith("--") and word != "--":
            raise Unjudgeable(f"{program} option {word!r}")
        if word.startswith(("-", "+")) and word != "-":
            if "i" in word[1:] or "s" in word[1:]:
                raise Unjudgeable(f"{program} {word} reads commands from elsewhere")
            has_c = has_c or "c" in word[1:]
            index += 1
            continue
        break
    if has_c and index < len(args):
        _code(args[index : index + 1], f"{program} -c", depth, parse, out, shell=program)
        return
    raise Unjudgeable(f"{program} runs a script or its input, which cannot be seen")


def _find(args: list[Word], depth: int, parse: ParseFn, out: ShellAnalysis) -> None:
    index = 0
    while index < len(args):
        word = args[index]
        if word in FIND_EXEC:
            end = index + 1
            while end < len(args) and args[end] not in (";", "+"):
                end += 1
            inner = [None if w is None or "{}" in w else w for w in args[index + 1 : end]]
            if not inner:
                raise Unjudgeable("find -exec without a command")
            _expand(inner, depth, parse, out, open_tail=args[end : end + 1] == ["+"])
            index = end + 1
            continue
        if word == "-delete":
            out.invocations.append(Invocation(("rm",), open_tail=True))
        elif word in FIND_WRITES:
            out.effects.append(f"find {word} writes a file")
        index += 1
