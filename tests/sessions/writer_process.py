"""A separate process that uses the store, for the multi-process and crash tests.

    python -m tests.sessions.writer_process append DB SESSION TURNS   (TURNS 0 = forever)
    python -m tests.sessions.writer_process hold DB SESSION
    python -m tests.sessions.writer_process lock DB SESSION

`append` commits one turn at a time (an assistant tool call, its result and a usage record)
and prints the ids of the turn's messages only after the commit returned. `hold` takes the
session's writer lease, prints "ready" and keeps it until stdin closes. `lock` holds the
database's write lock (a commit in progress), prints "ready" and keeps it until stdin closes.
"""

from __future__ import annotations

import itertools
import os
import signal
import sqlite3
import sys
from typing import TextIO

from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse
from gosling.providers import Usage
from gosling.sessions import SessionChanges, SqliteSessionStore, UsageRecord


def turn(n: int) -> tuple[Message, Message]:
    call_id = f"call_{os.getpid()}_{n}"
    request = Message.assistant(
        f"step {n}", ToolRequest(id=call_id, name="shell", arguments={"n": n})
    )
    result = Message.user(None, ToolResponse(id=call_id, content=(TextContent(text="x" * 200),)))
    return request, result


def append(
    db: str,
    session_id: str,
    turns: int,
    out: TextIO = sys.stdout,
    *,
    kill_at_statement: int | None = None,
) -> None:
    """`kill_at_statement`: SIGKILL this process as SQLite starts its n-th statement, so a
    crash lands at an exact point inside a commit, whatever the timing."""
    with SqliteSessionStore(db) as store:
        if kill_at_statement is not None:
            _kill_at(store, kill_at_statement)
        counter = itertools.count() if turns == 0 else range(turns)
        for n in counter:
            request, result = turn(n)
            usage = UsageRecord(Usage(input_tokens=1000 + n, output_tokens=10), model="fake")
            store.commit(session_id, SessionChanges(append=(request, result), usage=(usage,)))
            out.write(f"{request.id} {result.id}\n")
            out.flush()


def _kill_at(store: SqliteSessionStore, statement: int) -> None:
    seen = itertools.count(1)

    def trace(sql: str) -> None:
        if next(seen) == statement:
            os.kill(os.getpid(), signal.SIGKILL)

    store._conn.set_trace_callback(trace)


def hold(db: str, session_id: str) -> None:
    with SqliteSessionStore(db) as store:
        store.open_for_writing(session_id)
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        sys.stdin.read()


def lock(db: str) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.read()
    conn.execute("ROLLBACK")
    conn.close()


if __name__ == "__main__":
    command, db, session_id, *rest = sys.argv[1:]
    if command == "append":
        append(db, session_id, int(rest[0]))
    elif command == "lock":
        lock(db)
    else:
        hold(db, session_id)
