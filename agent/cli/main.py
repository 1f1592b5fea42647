"""Entry point of the `gosling` command.

Command groups live in their own modules and are imported only when invoked, so
`gosling --help` and `gosling --version` stay fast (no SDK, no rich, no pydantic import).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from gosling.agent.cli.commands import COMMANDS, HELP_FLAGS, ROOT_DOC, VERSION_FLAGS
from gosling.agent.version import __version__

SESSION_ALIASES = frozenset({"list", "ls", "show", "rename", "rm", "export", "import"})
"""Words after `gosling session` that can only mean the `sessions` command."""
COMMAND_ALIASES = {"exec": "run"}
"""Other CLIs' command words that mean one of ours (Codex's `exec`)."""
ROOT_OPTIONS = frozenset({*HELP_FLAGS, *VERSION_FLAGS})
PRINT_FLAGS = frozenset({"-p", "--print"})


def rewrite_anchor_spellings(args: list[str], known: set[str]) -> list[str]:
    """Claude Code's top-level habits as gosling commands: `gosling -p "q"` is `run "q"`,
    `gosling -c` / `gosling --model m` are `session ...`, and `gosling "fix the bug"` starts a
    session with that first prompt. A word close to a command name stays a (mistyped)
    command, so `gosling sesion` still gets "did you mean"."""
    if not args:
        return args
    first = args[0]
    if first in COMMAND_ALIASES:
        return [COMMAND_ALIASES[first], *args[1:]]
    if first in ("version", "help"):
        return ["--version" if first == "version" else "--help"]
    if first.startswith("-") and first not in ROOT_OPTIONS:
        if any(arg in PRINT_FLAGS for arg in args):
            return ["run", *(arg for arg in args if arg not in PRINT_FLAGS)]
        return ["session", *args]
    if first.startswith("-") or first in known:
        return args
    import difflib

    looks_mistyped = " " not in first and difflib.get_close_matches(first, known, cutoff=0.6)
    return args if looks_mistyped else ["session", *args]


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *super().list_commands(ctx)})

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, rewrite_anchor_spellings(args, set(COMMANDS)))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args[:1] == ["session"] and args[1:2] and args[1] in SESSION_ALIASES:
            args = ["sessions", *args[1:]]  # `gosling session list` means `sessions list`
        name = args[0] if args else ""
        if name and self.get_command(ctx, name) is None and not name.startswith("-"):
            from gosling.agent.cli.errors import did_you_mean

            known = self.list_commands(ctx)
            raise click.UsageError(f"no such command {name!r}{did_you_mean(name, known)}", ctx)
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS:
            module, attr, _ = COMMANDS[cmd_name]
            command: click.Command = getattr(importlib.import_module(module), attr)
            return command
        return super().get_command(ctx, cmd_name)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Click's main with gosling's error style (see `agent.cli.errors`)."""
        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
        except click.ClickException as exc:
            from gosling.agent.cli.errors import format_error

            click.echo(format_error(exc), err=True)
            _result_for_scripts(exc)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("error: aborted", err=True)
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in sorted(COMMANDS)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _result_for_scripts(exc: click.ClickException) -> None:
    """A usage error of `gosling run --json` (or stream-json) still ends in one result
    object on stdout, so a script reading it sees `is_error` instead of nothing."""
    ctx = getattr(exc, "ctx", None)
    argv = sys.argv[1:]
    wants = "--json" in argv or any(
        a in ("--output-format=json", "--output-format=stream-json")
        or (a == "--output-format" and argv[i + 1 : i + 2] in (["json"], ["stream-json"]))
        for i, a in enumerate(argv)
    )
    if not wants or (ctx is not None and ctx.info_name not in ("run", "exec")):
        return
    import json

    from gosling.agent.cli.errors import format_error
    from gosling.agent.cli.result_json import RunOutcome, result_object

    message = format_error(exc).removeprefix("error: ").splitlines()[0]
    outcome = RunOutcome("error", error=message, exit_code=exc.exit_code)
    click.echo(json.dumps(result_object(outcome)))


@click.group(
    cls=LazyGroup,
    help=ROOT_DOC,
    invoke_without_command=True,
    context_settings={"help_option_names": list(HELP_FLAGS)},
)
@click.version_option(__version__, *VERSION_FLAGS, prog_name="gosling")
@click.pass_context
def cli(ctx: click.Context) -> None:
    from gosling.agent.user_inputs import use_user_prompts

    use_user_prompts()  # the command line reads the user's prompt overrides; the library does not
    if ctx.invoked_subcommand is None:
        if sys.stdin.isatty() and sys.stdout.isatty():
            group = ctx.command
            assert isinstance(group, click.Group)
            session = group.get_command(ctx, "session")
            assert session is not None
            ctx.invoke(session)
        else:
            click.echo(ctx.get_help())


def main() -> None:
    from gosling.agent.cli import fast_exit

    fast_exit.enable()
    cli(prog_name="gosling")
