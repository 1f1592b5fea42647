"""See through the programs that run other programs: `env rm x` runs `rm`.

`analyse_argv` turns one simple command's argv into the invocations that permission rules
judge. Wrappers (`env`, `command`, `builtin`, `exec`, `nice`, `nohup`, `timeout`, `stdbuf`,
`ionice`, `time`, `coproc`, `xargs`, `sudo`) are peeled with their own options; shells given
`-c STRING`, `eval` and `trap` have their code parsed again; `find -exec CMD ;` adds `CMD`,
and `find -delete` counts as running `rm`. A wrapper option we do not know, or code we cannot
see (`bash script.sh`, `source f`, `sh -c "$X"`), makes the command unjudgeable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gosling.agent.permissions.shell_model import (
    CODE_VARIABLES,
    Invocation,
    ShellAnalysis,
    Word,
    assignment_is_harmless,
    base_name,
    program_name,
)

ParseFn = Callable[[str, int], ShellAnalysis]
"""Parse a nested code string (`sh -c`, `eval`) at a nesting depth."""

NEUTRAL = frozenset({"cd", "pushd", "popd", "true", "false", ":", "pwd", "echo", "test", "["})
"""Builtins with no effect beyond the shell itself: no allow rule needs to name them."""
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh"})
OPAQUE = frozenset({"source", ".", "fc", "alias", "enable"})
"""Builtins that run code we cannot see, or change what a later name runs (`alias ls=rm`
with expand_aliases, `enable -f lib.so`)."""
REBINDING = {"hash": "-p", "shopt": "expand_aliases", "mapfile": "-C", "readarray": "-C"}
"""Builtins that, given this word, rebind a name or run a callback string."""
FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
FIND_WRITES = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})


@dataclass(frozen=True)
class OptionSpec:
    """The options of a wrapper: flags alone, and those that take a value."""

    flags: str = ""
    valued: str = ""
    long_flags: frozenset[str] = frozenset()
    long_valued: frozenset[str] = frozenset()
    numeric: bool = False
    """`nice -10`: a dash and digits is an option."""


class Unjudgeable(Exception):
    """The argv cannot be judged; the message says why."""


def skip_options(args: list[Word], spec: OptionSpec) -> tuple[int, dict[str, Word]]:
    """Index of the first operand in `args` and the options seen (name -> value or "")."""
    seen: dict[str, Word] = {}
    index = 0
    while index < len(args):
        word = args[index]
        if word is None:
            raise Unjudgeable("a wrapper option is only known at run time")
        if word == "--":
            return index + 1, seen
        if not word.startswith("-") or word == "-":
            return index, seen
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            if name in spec.long_flags and not eq:
                seen[name] = ""
            elif name in spec.long_valued:
                if not eq:
                    index += 1
                    if index >= len(args):
                        raise Unjudgeable(f"option --{name} has no value")
                    seen[name] = args[index]
                else:
                    seen[name] = value
            else:
                raise Unjudgeable(f"unknown option {word!r}")
            index += 1
            continue
        if spec.numeric and word[1:].isdigit():
            index += 1
            continue
        position = 1
        while position < len(word):
            letter = word[position]
            if letter in spec.flags:
                seen[letter] = ""
                position += 1
                continue
            if letter in spec.valued:
                rest = word[position + 1 :]
                if rest:
                    seen[letter] = rest
                else:
                    index += 1
                    if index >= len(args):
                        raise Unjudgeable(f"option -{letter} has no value")
                    seen[letter] = args[index]
                break
            raise Unjudgeable(f"unknown option {word!r}")
        index += 1
    return index, seen


_SPECS = {
    "command": OptionSpec(flags="pvV"),
    "builtin": OptionSpec(),
    "exec": OptionSpec(flags="cl", valued="a"),
    "nice": OptionSpec(valued="n", long_valued=frozenset({"adjustment"}), numeric=True),
    "nohup": OptionSpec(),
    "time": OptionSpec(flags="p"),
    "coproc": OptionSpec(),
    "stdbuf": OptionSpec(valued="ioe", long_valued=frozenset({"input", "output", "error"})),
    "ionice": OptionSpec(flags="t", valued="cn", long_flags=frozenset({"ignore"})),
    "timeout": OptionSpec(
        flags="v",
        valued="sk",
        long_flags=frozenset({"foreground", "preserve-status", "verbose"}),
        long_valued=frozenset({"signal", "kill-after"}),
    ),
    "env": OptionSpec(
        flags="i0v",
        valued="uCS",
        long_flags=frozenset({"ignore-environment", "null", "debug"}),
        long_valued=frozenset(
            {"unset", "chdir", "split-string", "block-signal", "default-signal", "ignore-signal"}
        ),
    ),
    "sudo": OptionSpec(
        flags="AbEHknPSlvVK",
        valued="CDghprtTUu",
        long_flags=frozenset({"preserve-env", "non-interactive", "background", "login"}),
        long_valued=frozenset({"user", "group", "host", "prompt", "chdir", "chroot"}),
    ),
    "xargs": OptionSpec(
        flags="0rtpxo",
        valued="adEILnPsiel",
        long_flags=frozenset(
            {"null", "no-run-if-empty", "verbose", "interactive", "exit", "open-tty", "show-limits"}
        ),
        long_valued=frozenset(
            {
                "arg-file",
                "delimiter",
                "eof",
                "replace",
                "max-lines",
                "max-args",
                "max-procs",
                "max-chars",
                "process-slot-var",
            }
        ),
    ),
}
_CODE_RUNNERS = frozenset({"eval", "trap"})
"""Like `sh -c`: the code they are given is judged instead of them."""
_NEEDS_OWN_ALLOW = frozenset({"sudo"})
"""Wrappers that change who runs the program: an allow rule must name them too."""


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
        spec = _SPECS.get(program)
        if spec is None:
            _program(program, argv, depth, parse, out, open_tail=open_tail, local=local)
            return
        own_allow = local or program in _NEEDS_OWN_ALLOW
        out.invocations.append(Invocation(tuple(argv), open_tail, needs_allow=own_allow))
        start, seen = skip_options(argv[1:], spec)
        rest = argv[1 + start :]
        if program == "command" and ("v" in seen or "V" in seen):
            return  # `command -v rm` only looks rm up
        if program == "ionice" and not rest:
            return
        if program == "sudo" and ({"l", "v", "V", "K"} & seen.keys() or not rest):
            return
        if program == "timeout":
            rest = rest[1:]  # the DURATION
        elif program == "env":
            rest = _env_operands(rest, seen, out)
        elif program == "xargs":
            rest, open_tail = _xargs_command(rest, seen)
        argv = rest


def _env_operands(rest: list[Word], seen: dict[str, Word], out: ShellAnalysis) -> list[Word]:
    split = seen.get("S", seen.get("split-string"))
    if split is not None:
        raise Unjudgeable("env -S splits a string into a command")
    while rest and rest[0] is not None and "=" in rest[0] and not rest[0].startswith("="):
        variable = rest[0].split("=", 1)[0]
        if variable in CODE_VARIABLES:
            raise Unjudgeable(f"it sets {variable}, whose value bash may run")
        if not assignment_is_harmless(variable):
            out.effects.append(f"it sets {variable} for the program")
        rest = rest[1:]
    if rest and rest[0] is None:
        raise Unjudgeable("env's operand is only known at run time")
    return rest


def _xargs_command(rest: list[Word], seen: dict[str, Word]) -> tuple[list[Word], bool]:
    command = rest or ["echo"]
    replace = seen.get("I", seen.get("i", seen.get("replace")))
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
    out.invocations.append(Invocation(tuple(argv), open_tail, needs_allow=needs_allow))
    if program in OPAQUE:
        raise Unjudgeable(f"{program} runs or binds code that cannot be seen")
    marker = REBINDING.get(program)
    if marker is not None and any(w is None or w.startswith(marker) for w in argv[1:]):
        raise Unjudgeable(f"{program} {marker} changes what a later command runs")
    if program in SHELLS:
        _shell(program, argv[1:], depth, parse, out)
    elif program == "eval":
        _code(argv[1:], "eval", depth, parse, out)
    elif program == "trap" and len(argv) > 2:
        _code(argv[1:2], "trap", depth, parse, out)
    elif program == "find":
        _find(argv[1:], depth, parse, out)


def _code(words: list[Word], what: str, depth: int, parse: ParseFn, out: ShellAnalysis) -> None:
    if any(w is None for w in words):
        raise Unjudgeable(f"{what}'s code is only known at run time")
    out.merge(parse(" ".join(w for w in words if w is not None), depth + 1))


def _shell(program: str, args: list[Word], depth: int, parse: ParseFn, out: ShellAnalysis) -> None:
    """`bash -c STRING`: parse STRING; a shell reading a script or stdin cannot be judged."""
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
            index += 1
            continue
        if word.startswith(("-", "+")) and word != "-":
            if "i" in word[1:] or "s" in word[1:]:
                raise Unjudgeable(f"{program} {word} reads commands from elsewhere")
            has_c = has_c or "c" in word[1:]
            index += 1
            continue
        break
    if has_c and index < len(args):
        _code(args[index : index + 1], f"{program} -c", depth, parse, out)
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
