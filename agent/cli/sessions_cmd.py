"""`gosling sessions`: list, show, rename, remove, export and import stored sessions."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import click

if TYPE_CHECKING:
    from gosling.sessions import Session, SqliteSessionStore


@contextmanager
def _store() -> Iterator[SqliteSessionStore]:
    """The user's session store; store errors become one-line CLI errors."""
    from gosling.prompts.locations import user_dirs
    from gosling.sessions import SessionStoreError, SqliteSessionStore

    try:
        store = SqliteSessionStore.open_default(user_dirs().data)
    except SessionStoreError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        yield store
    except SessionStoreError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        store.close()


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")


def _local(timestamp: float) -> str:
    when = datetime.fromtimestamp(timestamp)
    same_year = when.year == datetime.now().year
    return when.strftime("%m-%d %H:%M" if same_year else "%Y-%m-%d")


def _home(path: Path) -> str:
    home = Path.home()
    return (
        f"~/{path.relative_to(home)}" if path.is_relative_to(home) and path != home else str(path)
    )


def _compact(n: int | None) -> str:
    if n is None:
        return "-"
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def _as_json(session: Session) -> dict[str, Any]:
    tokens = session.tokens
    return {
        "id": session.id,
        "name": session.name,
        "working_dir": str(session.working_dir),
        "provider": session.provider,
        "model": session.model,
        "message_count": session.message_count,
        "created_at": _iso(session.created_at),
        "updated_at": _iso(session.updated_at),
        "tokens": {
            "context": tokens.context_tokens,
            "input": tokens.input_tokens,
            "output": tokens.output_tokens,
            "cache_read": tokens.cache_read_tokens,
            "cache_write": tokens.cache_write_tokens,
            "total": tokens.total_tokens,
            "model_calls": tokens.model_calls,
        },
    }


class AliasedGroup(click.Group):
    """A group that also answers to the short names people type (`ls`, `delete`, ...)."""

    ALIASES: ClassVar[dict[str, str]] = {
        "ls": "list",
        "delete": "rm",
        "remove": "rm",
        "mv": "rename",
        "cat": "show",
    }

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, self.ALIASES.get(cmd_name, cmd_name))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and self.get_command(ctx, name) is None and not name.startswith("-"):
            from gosling.agent.cli.errors import did_you_mean

            known = [*self.list_commands(ctx), *self.ALIASES]
            raise click.UsageError(f"no such command {name!r}{did_you_mean(name, known)}", ctx)
        found, command, rest = super().resolve_command(ctx, args)
        return (command.name if command else found), command, rest


@click.group("sessions", cls=AliasedGroup)
def sessions_group() -> None:
    """List, show, rename, remove, export and import stored sessions."""


@sessions_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array for scripts.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Show at most N.")
@click.option("--all", "show_all", is_flag=True, help="Include sessions `gosling batch` made.")
def list_sessions(as_json: bool, limit: int | None, show_all: bool) -> None:
    """Sessions, most recently used first (batch tasks' sessions with --all)."""
    from gosling.agent.cli.session_names import ORIGIN_KEY

    with _store() as store:
        found = store.list_sessions()
        origins = {s.id: store.get_extension_data(s.id).get(ORIGIN_KEY) for s in found}
    hidden = 0 if show_all else sum(1 for s in found if origins[s.id])
    found = [s for s in found if show_all or not origins[s.id]][:limit]
    if as_json:
        click.echo(json.dumps([{**_as_json(s), "origin": origins[s.id]} for s in found], indent=2))
        return
    if not found:
        click.echo("No sessions yet. Start one with `gosling session`.")
    else:
        _print_table(found)
    if hidden:
        click.echo(f"({hidden} batch session(s) not shown; `gosling sessions list --all`)")


FIXED_COLUMNS = 52
"""Width of the ID, Updated, Msgs, Context and Tokens columns and the gaps between columns."""


def _print_table(found: list[Session]) -> None:
    """One line per session at any terminal width: the name is cut with an ellipsis and the
    directory keeps its end (`…/src/app`), never wrapping mid-path."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    room = max(console.width - FIXED_COLUMNS, 24)
    dir_width = max(room // 2, 12)
    table = Table(box=None, pad_edge=False)
    table.add_column("ID", no_wrap=True)
    table.add_column("Updated", no_wrap=True)
    table.add_column("Msgs", justify="right", no_wrap=True)
    table.add_column("Context", justify="right", no_wrap=True)
    table.add_column("Tokens", justify="right", no_wrap=True)
    table.add_column("Name", no_wrap=True, overflow="ellipsis", max_width=room - dir_width)
    table.add_column("Directory", no_wrap=True, max_width=dir_width)
    for s in found:
        table.add_row(
            s.id,
            _local(s.updated_at),
            str(s.message_count),
            _compact(s.tokens.context_tokens),
            _compact(s.tokens.total_tokens),
            s.name or "(unnamed)",
            _left_cut(_home(s.working_dir), dir_width),
        )
    console.print(table)


def _left_cut(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1) :]


@sessions_group.command("show")
@click.argument("session_id")
def show(session_id: str) -> None:
    """Print the transcript of a session as the user saw it."""
    from gosling.agent.context_report import receipt_lines
    from gosling.context_mgmt.receipt import RECEIPTS_KEY
    from gosling.sessions import export_session

    with _store() as store:
        text = export_session(store, session_id, "markdown")
        receipts = store.get_extension_data(session_id).get(RECEIPTS_KEY)
    click.echo(text, nl=False)
    if isinstance(receipts, list) and receipts:
        click.echo("\n## Compactions\n")
        for index, stored in enumerate(receipts, 1):
            first, *rest = receipt_lines(stored)
            click.echo(f"{index}. {first.removeprefix('Last compaction ')}")
            for row in rest:
                click.echo(f"   {row.strip()}")


@sessions_group.command("rename")
@click.argument("session_id")
@click.argument("name")
def rename(session_id: str, name: str) -> None:
    """Give a session a new name."""
    with _store() as store:
        session = store.rename(session_id, name)
    click.echo(f"renamed {session.id} to {session.name!r}")


def _stdin_is_terminal() -> bool:
    """Whether a yes/no question can be asked on stdin."""
    return sys.stdin.isatty()


@sessions_group.command("rm")
@click.argument("session_id")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def remove(session_id: str, yes: bool) -> None:
    """Delete a session and all its messages."""
    with _store() as store:
        session = store.get(session_id)
        if not yes and not _stdin_is_terminal():
            from gosling.agent.cli.errors import ConfigProblem

            raise ConfigProblem(
                f"no terminal to confirm deleting {session.id}; pass -y to delete it "
                f"(gosling sessions rm -y {session.id})"
            )
        if not yes:
            label = f"{session.name!r}, " if session.name else ""
            click.confirm(
                f"Delete session {session.id} ({label}{session.message_count} messages)?",
                abort=True,
            )
        store.delete(session_id)
    from gosling.agent.tools.spill import remove_session_files

    remove_session_files(session_id)
    click.echo(f"deleted {session_id}")


@sessions_group.command("export")
@click.argument("session_id")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "markdown"]),
    default="jsonl",
    show_default=True,
    help="jsonl is lossless (re-importable); markdown shows what the user saw.",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="File to write."
)
def export(session_id: str, fmt: str, output: Path | None) -> None:
    """Write a session as JSON Lines or Markdown (to stdout unless -o is given)."""
    from gosling.sessions import export_session

    with _store() as store:
        text = export_session(store, session_id, "markdown" if fmt == "markdown" else "jsonl")
    if output is None:
        click.echo(text, nl=False)
        return
    from gosling.sessions.files import write_private

    write_private(output, text)
    click.echo(f"wrote {output}", err=True)


@sessions_group.command("import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option(
    "--format",
    "fmt",
    default=None,
    help="gosling-jsonl, claude-code, mini-swe-agent, openhands or openai-chat (default: detect).",
)
def import_(file: Path, fmt: str | None) -> None:
    """Import a session file (`-` reads stdin): gosling's own jsonl export, a Claude Code
    session, a mini-swe-agent trajectory, an OpenHands log or OpenAI-chat JSON. Prints the id
    of each new session (an OpenHands file may hold several runs)."""
    from gosling.agent.cli.errors import ConfigProblem
    from gosling.sessions import ImportFailed
    from gosling.sessions.importers import parse_transcripts, to_snapshot

    try:
        if str(file) == "-":
            text, source = sys.stdin.read(), "stdin"
        else:
            text, source = file.read_text(encoding="utf-8"), str(file)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigProblem(f"cannot read {file}: {exc}") from exc
    try:
        transcripts = parse_transcripts(text, source=source, format=fmt)  # type: ignore[arg-type]
    except ImportFailed as exc:  # bad input: exit 2, as `context replay` does
        raise ConfigProblem(str(exc)) from exc
    with _store() as store:
        for transcript in transcripts:
            session = store.restore(to_snapshot(transcript))
            click.echo(session.id)
            stats = transcript.stats
            skipped = f", skipped {stats.skipped_total} record(s)" if stats.skipped_total else ""
            click.echo(
                f"imported {session.message_count} messages ({stats.tool_calls} tool calls) "
                f"from {transcript.source_format} as session {session.id}{skipped}",
                err=True,
            )
