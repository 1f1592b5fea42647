"""Which stored session `-r` without an ID continues: on a terminal the user picks one of
this directory's sessions (name, age, first prompt); elsewhere the latest, said on stderr."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gosling.agent.cli.options import PICK_SESSION

if TYPE_CHECKING:
    from gosling.sessions import Session, SqliteSessionStore

PICKER_SIZE = 9


def age(seconds: float) -> str:
    """`just now`, `5 min ago`, `3 h ago`, `2 days ago`."""
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86_400:
        return f"{int(seconds // 3600)} h ago"
    days = int(seconds // 86_400)
    return f"{days} day{'s' if days != 1 else ''} ago"


def first_prompt(store: SqliteSessionStore, session_id: str, width: int = 50) -> str:
    for message in store.load_messages(session_id):
        if message.role == "user" and message.text.strip():
            line = " ".join(message.text.split())
            return line if len(line) <= width else line[: width - 1] + "…"
    return ""


def sessions_here(store: SqliteSessionStore, working_dir: Path) -> list[Session]:
    return [s for s in store.list_sessions() if s.working_dir == working_dir]


def resume_target(
    store: SqliteSessionStore,
    working_dir: Path,
    requested: str,
) -> str:
    """The id to resume: `requested`; the latest session of `working_dir` when empty; for
    PICK_SESSION, the user's pick on a terminal, else the latest (said on stderr)."""
    if requested and requested != PICK_SESSION:
        return requested
    found = sessions_here(store, working_dir)
    if not found:
        raise LookupError(
            f"no session to resume in {working_dir}; `gosling sessions list` shows them all, "
            "and `gosling run -r ID` continues one"
        )
    if requested == PICK_SESSION and sys.stdin.isatty() and sys.stderr.isatty():
        return _pick(store, found[:PICKER_SIZE])
    if requested == PICK_SESSION:
        latest = found[0]
        click.echo(
            f"gosling: no terminal to pick on; resuming the latest session here, {latest.id} "
            f"({latest.name or 'unnamed'})",
            err=True,
        )
    return found[0].id


def _pick(store: SqliteSessionStore, found: list[Session]) -> str:
    now = time.time()
    click.echo("Sessions in this directory:", err=True)
    for number, session in enumerate(found, 1):
        name = session.name or "(unnamed)"
        said = first_prompt(store, session.id)
        click.echo(
            f"  {number}. {session.id}  {name[:40]}  · {age(now - session.updated_at)}"
            + (f"  · “{said}”" if said and said != name else ""),
            err=True,
        )
    choice: int = click.prompt(
        "Resume which session?",
        type=click.IntRange(1, len(found)),
        default=1,
        err=True,
    )
    return found[choice - 1].id
