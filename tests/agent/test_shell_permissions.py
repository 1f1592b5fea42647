"""Shell rules decided on a bash parse: every program a command line runs is judged."""

from __future__ import annotations

from pathlib import Path

import pytest

from gosling.agent.permissions import (
    PermissionMode,
    PermissionRule,
    Verdict,
    decide,
    rules_from_lists,
)
from gosling.agent.permissions.shell_parse import analyse

SHELL = "developer__shell"
ALLOW_LS = rules_from_lists(allow=["developer__shell(ls)"])
ALLOW = rules_from_lists(
    allow=["developer__shell(ls)", "developer__shell(cat)", "developer__shell(git status)"]
)
DENY_RM = rules_from_lists(deny=["developer__shell(rm)"])


def verdict(
    command: str, mode: PermissionMode, rules: tuple[PermissionRule, ...] | list[PermissionRule]
) -> Verdict:
    return decide(SHELL, {"command": command}, None, mode, rules, Path("/w")).verdict


# -- the attacks of issue 14 -------------------------------------------------------------------


@pytest.mark.parametrize("mode", [PermissionMode.APPROVE, PermissionMode.SMART_APPROVE])
def test_a_hash_inside_a_word_does_not_hide_the_next_command(mode: PermissionMode) -> None:
    decision = decide(SHELL, {"command": "ls a#; touch PWNED"}, None, mode, ALLOW_LS, Path("/w"))
    assert decision.verdict is Verdict.ASK
    assert "touch PWNED" in decision.reason
    assert verdict("ls a#", mode, ALLOW_LS) is Verdict.ALLOW


@pytest.mark.parametrize(
    "command",
    [
        "/bin/rm x",
        "command rm x",
        "env rm x",
        "ls a#; rm -rf x",
        "find . -delete",
        "/usr/bin/rm -f x",
        "./rm x",
        "'r'm x",
        "r\\m x",
        '"rm" x',
        "$'\\x72m' x",
        "env -i FOO=1 rm x",
        "nice -n 5 nohup timeout -s KILL 5 rm x",
        "sudo -u root rm x",
        "stdbuf -oL ionice -c 3 rm x",
        "time rm x",
        "exec rm x",
        "builtin command rm x",
        "echo x | xargs rm",
        "echo x | xargs -0 -n1 rm -f",
        "find . -name x -exec rm {} \\;",
        "find . -execdir rm -f {} +",
        "sh -c 'ls; rm x'",
        'bash -c "cd /tmp && rm x"',
        "eval 'rm x'",
        "eval rm x",
        "echo $(rm x)",
        "echo `rm x`",
        'echo "$(rm x)"',
        "cat <(rm x)",
        "tee >(rm x) < a",
        "cat <<EOF\n$(rm x)\nEOF",
        "cat <<EOF\n`rm x`\nEOF",
        "cat <<< $(rm x)",
        "ls\nrm x",
        "true && rm x",
        "false || rm x",
        "sleep 1 & rm x",
        "ls | rm x",
        "( rm x )",
        "{ rm x; }",
        "if true; then rm x; fi",
        "for f in a; do rm $f; done",
        "while false; do rm x; done",
        "case a in a) rm x;; esac",
        "f() { rm x; }; f",
        "! rm x",
        "X=$(rm x) ls",
        "export A=$(rm x)",
        "echo $(( 1 + $(rm x) ))",
        "[[ -f a ]] && rm x",
        "ls > $(rm x)",
        "trap 'rm x' EXIT",
        "./env rm x",
        "/opt/bin/timeout 5 rm x",
        'echo "${v:-`rm x`}"',
        "echo ${v/a/`rm x`}",
        "case $(rm x) in *) ;; esac",
        "for f in `rm x`; do :; done",
    ],
)
def test_deny_rules_see_every_program_that_runs(command: str) -> None:
    assert verdict(command, PermissionMode.AUTO, DENY_RM) is Verdict.DENY
    assert verdict(command, PermissionMode.APPROVE, (*DENY_RM, *ALLOW)) is Verdict.DENY


@pytest.mark.parametrize(
    "command",
    [
        "$CMD x",
        "$(echo rm) x",
        "`echo rm` x",
        "r* x",
        "{rm,x}",
        "echo rm x | sh",
        "bash script.sh",
        'sh -c "$X"',
        'eval "$X"',
        "source ./script",
        ". ./script",
        "echo x | xargs -I{} {} x",
        "env -S 'rm x'",
        "ls\\\nrm x",
        "echo 'unbalanced",
        "x='a[$(rm y)]'; echo $((x))",
        "[[ 'a[$(rm y)]' -eq 0 ]]",
        "PS4='$(rm x)' bash -xc ls",
        "v='$(rm x)'; echo ${v@P}",
        "BASH_ENV=./evil bash -c ls",
        "! if true; then rm x; fi",
        "(" * 300 + "ls" + ")" * 300,
        "ls " + "a" * 100_001,
        "let 'a[$(rm x)]=1'",
        "hash -p /bin/rm ls; ls x",
        "shopt -s expand_aliases\nalias ls=rm\nls x",
        "mapfile -C 'rm x' -c 1 < a",
        "enable -f ./evil.so ls",
    ],
)
def test_what_cannot_be_judged_asks_when_a_deny_rule_might_be_passed(command: str) -> None:
    assert verdict(command, PermissionMode.AUTO, DENY_RM) is Verdict.ASK
    assert verdict(command, PermissionMode.APPROVE, ALLOW) is Verdict.ASK


def test_deny_rules_with_several_words_ask_when_a_word_is_unknown() -> None:
    rules = rules_from_lists(deny=["developer__shell(git push)"])
    assert verdict("git push origin", PermissionMode.AUTO, rules) is Verdict.DENY
    assert verdict("git $X origin", PermissionMode.AUTO, rules) is Verdict.ASK
    assert verdict("echo push | xargs git", PermissionMode.AUTO, rules) is Verdict.ASK
    assert verdict("git status", PermissionMode.AUTO, rules) is Verdict.ALLOW
    assert verdict("git pushy", PermissionMode.AUTO, rules) is Verdict.ALLOW


# -- allow rules vouch only for what they name ----------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "ls 'a b' a# \"c d\"",
        "ls | cat",
        "cd src && ls -la",
        "ls 2>/dev/null || true",
        "ls 2>&1 >/dev/null | cat -n",
        "git status --short && cat README.md",
        "ls '#'; cat a",
        "cat < a",
        "ls src/*.py",
        "ls\ncat a",
    ],
)
def test_allow_rules_approve_commands_made_only_of_what_they_name(command: str) -> None:
    assert verdict(command, PermissionMode.APPROVE, ALLOW) is Verdict.ALLOW
    assert verdict(command, PermissionMode.AUTO, DENY_RM) is Verdict.ALLOW


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("ls \\#", "'\\\\#' holds characters bash may expand"),
        ("/bin/ls", "is not a plain name"),
        ("env LANG=C ls", "no allow rule covers env LANG=C ls"),
        ("timeout 5 ls", "no allow rule covers timeout 5 ls"),
        ("ls $(cat list.txt)", "command substitution"),
        ("cat <<EOF\nhello\nEOF", "heredoc redirect"),
        ("ls # ; rm x", "comment"),
        ("ls *", "could expand to an option"),
        ("ls \f#; touch x", "control character U+000C"),
        ("ls ~", "characters bash may expand"),
    ],
)
def test_allow_rules_vouch_only_inside_the_closed_grammar(command: str, why: str) -> None:
    """What the old checker read through (wrappers, substitutions, here-docs) now asks:
    an allow rule approves only a line gosling reads exactly as bash does."""
    decision = decide(SHELL, {"command": command}, None, PermissionMode.APPROVE, ALLOW, Path("/w"))
    assert decision.verdict is Verdict.ASK
    assert why in decision.reason


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("ls > out.txt", "it writes to out.txt"),
        ("ls >> log", "it writes to log"),
        ("ls &> out", "it writes to out"),
        ("ls >&out", "it writes to out"),
        ("cat a | tee b", "no allow rule covers tee b"),
        ("PATH=. ls", "variable assignment"),
        ("PATH=/tmp/evil; ls", "variable assignment"),
        ("env LD_PRELOAD=x.so ls", "no allow rule covers env LD_PRELOAD=x.so ls"),
        ("./ls", "'./ls' is not a plain name"),
        ("./env ls", "'./env' is not a plain name"),
        ("sudo ls", "no allow rule covers sudo ls"),
        ("git status; git push", "no allow rule covers git push"),
        ("ls && sh -c 'touch x'", "no allow rule covers sh -c touch x"),
        ("find . -name x", "no allow rule covers find . -name x"),
        ("ls; ls() { rm x; }", "function definition"),
    ],
)
def test_allow_rules_do_not_vouch_for_effects_beyond_them(command: str, why: str) -> None:
    decision = decide(SHELL, {"command": command}, None, PermissionMode.APPROVE, ALLOW, Path("/w"))
    assert decision.verdict is Verdict.ASK
    assert why in decision.reason


def test_a_bare_shell_allow_rule_still_asks_for_what_cannot_be_judged() -> None:
    bare = rules_from_lists(allow=["developer__shell"])
    assert verdict("git status && curl -s x | sh", PermissionMode.APPROVE, bare) is Verdict.ASK
    assert verdict("make && make test", PermissionMode.APPROVE, bare) is Verdict.ALLOW
    assert verdict("make > log", PermissionMode.APPROVE, bare) is Verdict.ASK


def test_auto_mode_runs_anything_when_no_shell_rule_could_be_passed() -> None:
    assert verdict("$CMD; echo hi > out", PermissionMode.AUTO, ()) is Verdict.ALLOW
    ask_push = rules_from_lists(ask=["developer__shell(git push)"])
    assert verdict("$CMD x", PermissionMode.AUTO, ask_push) is Verdict.ASK
    assert verdict("cd src && make", PermissionMode.AUTO, ask_push) is Verdict.ALLOW


# -- the parse itself ------------------------------------------------------------------------------


def test_the_parse_lists_each_program_with_quotes_removed() -> None:
    analysis = analyse("env -i LANG=C nice -n 3 'r'm -f \"a b\" $'c\\td'; ls | xargs -n1 cat")
    argvs = [i.argv for i in analysis.invocations if i.needs_allow]
    assert argvs == [("rm", "-f", "a b", "c\td"), ("ls",), ("cat",)]
    assert analysis.unknowns == [] and analysis.effects == []


def test_parses_are_cached_per_command_string() -> None:
    first = analyse("ls -la; cat a")
    assert analyse("ls -la; cat a") is first
