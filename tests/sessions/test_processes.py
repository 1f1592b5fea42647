"""Several processes share one database; a killed writer never loses an acknowledged turn."""

from __future__ import annotations

import os
import random
import signal
import subprocess
from pathlib import Path
from typing import TextIO

import pytest

from gosling.conversation import Message
from gosling.sessions import SessionBusy, SqliteSessionStore
from tests.sessions.conftest import Spawn
from tests.sessions.writer_process import append


def _line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    return process.stdout.readline().strip()


def _new_session(db_path: Path) -> str:
    with SqliteSessionStore(db_path) as store:
        return store.create(working_dir="/w").id


def test_a_reader_process_follows_a_writer_process(db_path: Path, spawn: Spawn) -> None:
    session_id = _new_session(db_path)
    turns = 150
    writer = spawn("append", str(db_path), session_id, str(turns))
    midway_reads = 0
    seen = 0
    with SqliteSessionStore(db_path) as reader:
        while writer.poll() is None:
            [listed] = reader.list_sessions()
            loaded = reader.load_messages(session_id)
            assert len(loaded) % 2 == 0, "a turn was visible half-written"
            assert listed.message_count <= len(loaded)
            assert len(loaded) >= seen
            seen = len(loaded)
            midway_reads += 0 < seen < 2 * turns
        out, err = writer.communicate()
        assert writer.returncode == 0, err
        acknowledged = out.split()
        loaded_ids = {m.id for m in reader.load_messages(session_id)}
        assert len(acknowledged) == 2 * turns
        assert set(acknowledged) <= loaded_ids
        assert reader.get(session_id).tokens.model_calls == turns
    assert midway_reads > 0, "the reader never ran while the writer was writing"


def test_opening_the_store_does_not_wait_for_another_process_writing(
    db_path: Path, spawn: Spawn
) -> None:
    """`gosling session list` (or the next batch task) while another process is in the
    middle of a commit: the schema is current, so opening takes no write lock and reads."""
    session_id = _new_session(db_path)
    writer = spawn("lock", str(db_path), session_id)
    assert _line(writer) == "ready"
    for _ in range(2):
        # A lock wait would outlast this and fail the open ("database is locked").
        with SqliteSessionStore(db_path, busy_timeout=0.05) as reader:
            assert [s.id for s in reader.list_sessions()] == [session_id]
    assert writer.poll() is None, "the writer gave up its lock before the readers opened"


def test_a_session_held_by_a_live_process_is_refused(db_path: Path, spawn: Spawn) -> None:
    session_id = _new_session(db_path)
    holder = spawn("hold", str(db_path), session_id)
    assert _line(holder) == "ready"
    with SqliteSessionStore(db_path) as store:
        with pytest.raises(SessionBusy, match=f"process {holder.pid}"):
            store.open_for_writing(session_id)
        with pytest.raises(SessionBusy):
            store.append_messages(session_id, [Message.user("interleaved?")])
        with pytest.raises(SessionBusy):
            store.delete(session_id)
        assert store.load_messages(session_id) == []  # reading is always allowed
        store.rename(session_id, "renaming is allowed too")

        assert holder.stdin is not None
        holder.stdin.close()
        assert holder.wait() == 0
        store.append_messages(session_id, [Message.user("now mine")])
        assert [m.text for m in store.load_messages(session_id)] == ["now mine"]


def test_a_killed_holder_does_not_block_the_session(db_path: Path, spawn: Spawn) -> None:
    session_id = _new_session(db_path)
    holder = spawn("hold", str(db_path), session_id)
    assert _line(holder) == "ready"
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    with SqliteSessionStore(db_path) as store:
        store.open_for_writing(session_id)
        store.append_messages(session_id, [Message.user("resumed")])


def test_two_stores_in_one_process_do_not_share_a_session(db_path: Path) -> None:
    session_id = _new_session(db_path)
    with SqliteSessionStore(db_path) as first, SqliteSessionStore(db_path) as second:
        first.open_for_writing(session_id)
        with pytest.raises(SessionBusy, match="open for writing"):
            second.open_for_writing(session_id)
        first.release(session_id)
        second.open_for_writing(session_id)


def _fork_writer(
    db_path: Path, session_id: str, kill_at_statement: int | None = None
) -> tuple[int, TextIO]:
    """A forked child that appends turns forever, acknowledging each after its commit.

    Forking (rather than starting an interpreter) makes each of the many kills cheap; the
    parent holds no open database connection at that point, as SQLite requires.
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        try:
            os.close(read_end)
            out = os.fdopen(write_end, "w")
            append(str(db_path), session_id, 0, out, kill_at_statement=kill_at_statement)
        finally:
            os._exit(1)
    os.close(write_end)
    return pid, os.fdopen(read_end)


KILL_SEEDS = (1, 2, 3)
STATEMENTS_PER_TURN = 8
"""More than one turn's commit executes, so the exact kills cover every point inside it."""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and SIGKILL")
@pytest.mark.parametrize("seed", KILL_SEEDS)
def test_kill_9_at_random_points_never_loses_an_acknowledged_turn(db_path: Path, seed: int) -> None:
    """Half the kills come from outside at a random moment; the other half strike as SQLite
    starts a chosen statement, so every point inside a commit is hit on every run and a turn
    split into two transactions fails whatever the timing. The seed is printed."""
    print(f"kill schedule seed {seed}")
    rng = random.Random(seed)
    session_id = _new_session(db_path)
    acknowledged: list[str] = []
    exact_points = list(range(1, 3 * STATEMENTS_PER_TURN))
    rng.shuffle(exact_points)
    for iteration in range(50):
        exact = exact_points.pop() if iteration % 2 and exact_points else None
        pid, acks = _fork_writer(db_path, session_id, kill_at_statement=exact)
        with acks:
            if exact is not None:
                acknowledged.extend(acks.read().split())  # until the child killed itself
            else:
                for _ in range(rng.randrange(0, 25)):
                    line = acks.readline()
                    assert line, f"writer died on its own (seed {seed})"
                    acknowledged.extend(line.split())
                os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status), f"seed {seed}: the writer exited instead of dying"

        context = f"seed {seed}, iteration {iteration}, killed at statement {exact}"
        with SqliteSessionStore(db_path) as store:
            assert store.check_integrity() == [], context
            messages = store.load_messages(session_id)
            usage = store.usage_records(session_id)
            session = store.get(session_id)
        ids = {m.id for m in messages}
        missing = [i for i in acknowledged if i not in ids]
        assert not missing, f"{context}: acknowledged but lost: {missing}"
        # A turn is atomic: both messages and the usage record, or none of them.
        assert len(messages) == 2 * len(usage) == session.message_count, context
        requests = [r.id for m in messages for r in m.tool_requests]
        responses = [r.id for m in messages for r in m.tool_responses]
        assert requests == responses, context
        assert session.tokens.model_calls == len(usage), context
    assert acknowledged, f"no turn was ever acknowledged (seed {seed})"


def test_a_killed_interpreter_leaves_a_usable_database(db_path: Path, spawn: Spawn) -> None:
    """The same as above with a freshly started interpreter, killed mid-stream."""
    session_id = _new_session(db_path)
    writer = spawn("append", str(db_path), session_id, "0")
    acknowledged = [*_line(writer).split(), *_line(writer).split()]
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    with SqliteSessionStore(db_path) as store:
        assert store.check_integrity() == []
        assert set(acknowledged) <= {m.id for m in store.load_messages(session_id)}
