"""A full disk, a read-only data directory and a damaged file, as `gosling` users meet them.

Each ends in one `error: ...` line naming the file and the fix, exit 1, with every earlier
commit intact and the session resumable once the disk has room again. The full disk and the
read-only mount are real: a tiny tmpfs and a read-only bind mount in a private mount namespace
(`unshare`), skipped where the machine does not allow one. The disk-full commit is also
covered without privileges through SQLite's own page limit.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from gosling.conversation import Message
from gosling.sessions import SqliteSessionStore, StoreUnwritable
from tests.fakes import FakeLLMServer, FakeToolCall, Turn

REPO = Path(__file__).resolve().parents[2]


class MountNamespace:
    """A private mount namespace kept alive by a holder process; commands enter it."""

    def __init__(self) -> None:
        self._holder = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", "echo ready; cat"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._holder.stdout is not None
        if self._holder.stdout.readline().strip() != "ready":
            self.close()
            raise OSError("unshare --mount failed")

    def prefix(self) -> list[str]:
        return ["nsenter", "-t", str(self._holder.pid), "-m", "--"]

    def run(self, args: Sequence[str]) -> None:
        subprocess.run([*self.prefix(), *args], check=True, capture_output=True, timeout=30)

    def close(self) -> None:
        if self._holder.stdin is not None:
            self._holder.stdin.close()
        self._holder.wait(timeout=10)
        if self._holder.stdout is not None:
            self._holder.stdout.close()


def _can_mount() -> bool:
    if not (shutil.which("unshare") and shutil.which("nsenter")):
        return False
    probe = subprocess.run(
        ["unshare", "--mount", "sh", "-c", "mount -t tmpfs none /mnt"],
        capture_output=True,
        timeout=30,
    )
    return probe.returncode == 0


needs_mounts = pytest.mark.skipif(
    sys.platform != "linux" or not _can_mount(), reason="needs a private mount namespace"
)


@pytest.fixture
def namespace() -> Iterator[MountNamespace]:
    ns = MountNamespace()
    yield ns
    ns.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    (work / ".git").mkdir(parents=True)
    return work


@pytest.fixture
def data_dir() -> Path:
    data = Path(os.environ["GOSLING_HOME"]) / "data"
    data.mkdir(parents=True, exist_ok=True)
    return data


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"ANTHROPIC_API_KEY": "test-key", "GOSLING_MAX_RETRIES": "0", "NO_COLOR": "1"})
    return env


def gosling(
    args: Sequence[str], cwd: Path, ns: MountNamespace | None = None
) -> subprocess.CompletedProcess[str]:
    prefix = ns.prefix() if ns is not None else []
    env = {**_env(), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "gosling", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_args(server: FakeLLMServer, *rest: str) -> list[str]:
    # The agent's own shell fills the disk below, so the sandbox (which hides gosling's data
    # dir from tool processes) is off: these tests are about the store.
    return [
        "run",
        *("--provider", "anthropic", "--model", "m", "--base-url", server.url),
        *("--sandbox", "off"),
        *rest,
    ]


def assert_one_clear_error(result: subprocess.CompletedProcess[str], *phrases: str) -> str:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    for phrase in phrases:
        assert phrase in line, line
    return line


@needs_mounts
def test_disk_full_mid_turn_then_resume_on_a_full_disk_then_with_space(
    namespace: MountNamespace, repo: Path, data_dir: Path
) -> None:
    namespace.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(data_dir)])
    fill = data_dir / "fill"
    with FakeLLMServer() as server:
        server.add(
            Turn(
                text="Filling the disk.",
                tool_calls=[
                    FakeToolCall("developer__shell", {"command": f"head -c 8M /dev/zero > {fill}"})
                ],
            )
        )
        full = gosling(run_args(server, "-t", "fill the disk"), repo, namespace)
        line = assert_one_clear_error(full, str(data_dir / "sessions.db"), "disk is full")
        session_id = re.search(r"--resume (\S+)`", line)
        assert session_id, line

        again = gosling(run_args(server, "--resume", session_id[1], "-t", "again"), repo, namespace)
        assert_one_clear_error(again, "disk is full", "intact")

        namespace.run(["rm", str(fill)])
        server.add(Turn(text="Resumed after the disk had room."))
        resumed = gosling(
            run_args(server, "--resume", session_id[1], "-t", "carry on"), repo, namespace
        )
        assert resumed.returncode == 0, resumed.stderr
        assert resumed.stdout.strip() == "Resumed after the disk had room."
        body = server.model_requests()[-1].body
    sent = json.dumps(body["messages"])
    assert "fill the disk" in sent and "Filling the disk." in sent  # the first commit survived
    assert "carry on" in sent
    # The call whose result could not be saved is not sent unanswered.
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user"], roles


@needs_mounts
def test_read_only_data_directory(namespace: MountNamespace, repo: Path, data_dir: Path) -> None:
    with FakeLLMServer([Turn(text="Saved before the mount.")]) as server:
        first = gosling(run_args(server, "-t", "remember this"), repo)
        assert first.returncode == 0, first.stderr
        with SqliteSessionStore(data_dir / "sessions.db") as store:
            (session,) = store.list_sessions()
        namespace.run(["mount", "--bind", str(data_dir), str(data_dir)])
        namespace.run(["mount", "-o", "remount,bind,ro", str(data_dir)])

        new = gosling(run_args(server, "-t", "a new session"), repo, namespace)
        assert_one_clear_error(new, str(data_dir / "sessions.db"), "read-only", "GOSLING_HOME")
        resume = gosling(run_args(server, "--resume", session.id, "-t", "more"), repo, namespace)
        assert_one_clear_error(resume, "read-only", f"--resume {session.id}")
        assert server.model_requests()[1:] == []

    listed = gosling(["sessions", "list", "--json"], repo, namespace)
    assert listed.returncode == 0, listed.stderr
    assert [s["id"] for s in json.loads(listed.stdout)] == [session.id]
    shown = gosling(["sessions", "show", session.id], repo, namespace)
    assert shown.returncode == 0, shown.stderr
    assert "Saved before the mount." in shown.stdout
    exported = gosling(["sessions", "export", session.id], repo, namespace)
    assert exported.returncode == 0, exported.stderr
    assert "remember this" in exported.stdout
    assert sorted(p.name for p in data_dir.iterdir()) == ["sessions.db", "sessions.db.locks"]


def test_a_damaged_messages_table_is_one_clear_error(repo: Path, data_dir: Path) -> None:
    db = data_dir / "sessions.db"
    with SqliteSessionStore(db) as store:
        session = store.create(working_dir=repo)
        store.append_messages(session.id, [Message.user("x" * 2000) for _ in range(50)])
    with sqlite3.connect(db) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        (root,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'messages'"
        ).fetchone()
    with db.open("r+b") as raw:  # the table's root page becomes garbage; the schema is fine
        raw.seek((root - 1) * page_size)
        raw.write(b"\xff" * page_size)

    with FakeLLMServer([Turn(text="never stored")]) as server:
        new = gosling(run_args(server, "-t", "hello"), repo)
        assert_one_clear_error(new, str(db), "damage", "gosling sessions export")
        resumed = gosling(run_args(server, "--resume", session.id, "-t", "hello"), repo)
        assert_one_clear_error(resumed, str(db), "damage")


def test_a_sessions_file_that_is_a_loop_of_links_is_one_clear_error(
    repo: Path, data_dir: Path
) -> None:
    """A dotfiles link gone wrong: the store's path cannot even be looked at."""
    db = data_dir / "sessions.db"
    db.symlink_to(db.name)  # points at itself
    with FakeLLMServer([Turn(text="never sent")]) as server:
        run = gosling(run_args(server, "-t", "hello"), repo)
        assert_one_clear_error(run, str(db), "Too many levels of symbolic links", "GOSLING_HOME")
        assert server.model_requests() == []
    assert db.is_symlink() and os.readlink(db) == db.name  # left as it was


def test_a_full_database_keeps_every_earlier_commit(tmp_path: Path) -> None:
    """SQLite's page limit reports exactly what a full disk does: SQLITE_FULL."""
    db = tmp_path / "sessions.db"
    with SqliteSessionStore(db) as store:
        session = store.create(working_dir=tmp_path)
        store.append_messages(session.id, [Message.user("kept")])
        pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
        store._conn.execute(f"PRAGMA max_page_count = {pages + 1}")
        with pytest.raises(StoreUnwritable, match=f"disk is full.*--resume {session.id}"):
            store.append_messages(session.id, [Message.user("y" * 100_000)])
    with SqliteSessionStore(db) as store:
        assert [m.text for m in store.load_messages(session.id)] == ["kept"]
        store.append_messages(session.id, [Message.user("more")])
        assert store.check_integrity() == []


def test_a_full_disk_when_taking_the_writer_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resuming on a full disk: the pid cannot be written into the session's lock file."""
    import errno
    import types

    import gosling.sessions.locking as locking

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    failing_os = types.SimpleNamespace(**{**vars(os), "write": full})
    db = tmp_path / "sessions.db"
    with SqliteSessionStore(db) as store:
        session = store.create(working_dir=tmp_path)
    with SqliteSessionStore(db) as store:
        monkeypatch.setattr(locking, "os", failing_os)
        with pytest.raises(StoreUnwritable, match=f"disk is full.*--resume {session.id}"):
            store.open_for_writing(session.id)
        monkeypatch.undo()
        store.open_for_writing(session.id)  # space is back: the session resumes
        store.append_messages(session.id, [Message.user("resumed")])


def test_a_second_store_on_the_same_file_keeps_the_first_ones_locks(tmp_path: Path) -> None:
    """A program holding two stores on one database (a library user, a server opening one per
    request): opening the second must not drop the first connection's locks. If it does, the
    next process to close the database believes it is the last user, checkpoints and deletes
    the write-ahead log that the first store is still writing to."""
    db = tmp_path / "sessions.db"
    wal = tmp_path / "sessions.db-wal"
    with SqliteSessionStore(db) as first:
        session = first.create(working_dir=tmp_path)
        first.append_messages(session.id, [Message.user("before")])
        with SqliteSessionStore(db) as second:
            assert [m.text for m in second.load_messages(session.id)] == ["before"]
            assert wal.exists()
            other = f"from gosling.sessions import SqliteSessionStore as S; S({str(db)!r}).close()"
            subprocess.run([sys.executable, "-c", other], check=True, cwd=Path.cwd())
            assert wal.exists(), "another process took the open database for unused"
            first.append_messages(session.id, [Message.user("after")])
    with SqliteSessionStore(db) as store:
        assert [m.text for m in store.load_messages(session.id)] == ["before", "after"]
        assert store.check_integrity() == []


_READ_ONLY_READER = """
import ctypes, sys, _sqlite3
from concurrent.futures import ThreadPoolExecutor

# SQLite's own default, which Debian's build changes: a `file:` name is a URI only when the
# caller says so. Set while no connection is open, before the store makes any.
try:
    sqlite = ctypes.CDLL(_sqlite3.__file__)
    sqlite.sqlite3_shutdown()
    sqlite.sqlite3_config(17, ctypes.c_int(0))  # SQLITE_CONFIG_URI, off
    sqlite.sqlite3_initialize()
except (OSError, AttributeError):
    pass  # SQLite's symbols are not reachable here: the build's own setting stays

from gosling.sessions import SqliteSessionStore

with SqliteSessionStore(sys.argv[1]) as store:
    assert store.read_only
    sessions = store.list_sessions()
    with ThreadPoolExecutor(max_workers=2) as pool:  # a store is shared between threads
        texts = list(pool.map(lambda s: [m.text for m in store.load_messages(s.id)], sessions))
print(texts)
"""


@needs_mounts
def test_a_read_only_store_reads_from_any_thread_whatever_sqlites_uri_default(
    namespace: MountNamespace, data_dir: Path
) -> None:
    db = data_dir / "sessions.db"
    with SqliteSessionStore(db) as store:
        session = store.create(working_dir=data_dir)
        store.append_messages(session.id, [Message.user("saved before the mount")])
    namespace.run(["mount", "--bind", str(data_dir), str(data_dir)])
    namespace.run(["mount", "-o", "remount,bind,ro", str(data_dir)])
    read = subprocess.run(
        [*namespace.prefix(), sys.executable, "-c", _READ_ONLY_READER, str(db)],
        env={**_env(), "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert read.returncode == 0, read.stderr
    assert read.stdout.strip() == "[['saved before the mount']]"
    assert sorted(p.name for p in data_dir.iterdir()) == ["sessions.db", "sessions.db.locks"]
