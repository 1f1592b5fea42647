"""File tools under attack or fault: FIFOs and devices, symlink swaps, slow disks, undo over
someone else's change, and edits that match thousands of times."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gosling.agent.tools import DeveloperSettings
from gosling.agent.tools.developer.workspace import DeveloperState
from tests.agent.tools.test_files import Files

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX FIFOs and symlinks")


@pytest.fixture
def files(tmp_path: Path) -> Files:
    root = tmp_path / "project"
    root.mkdir()
    return Files(root)


@contextlib.contextmanager
def fifo_rescue(fifo: Path, grace: float = 5.0) -> Iterator[None]:
    """If a call is still stuck on `fifo` after `grace` seconds (gosling opened it and waits
    for the other end, blocking the event loop), keep playing the other end until the call
    returns, so that a regression fails the test instead of hanging the suite."""
    done = threading.Event()

    def rescue() -> None:
        if done.wait(grace):
            return
        while not done.wait(0.05):
            for flags in (os.O_WRONLY, os.O_RDONLY):
                with contextlib.suppress(OSError):
                    fd = os.open(fifo, flags | os.O_NONBLOCK)
                    with contextlib.suppress(OSError):
                        if flags == os.O_RDONLY:
                            os.read(fd, 1 << 20)
                    os.close(fd)

    helper = threading.Thread(target=rescue, daemon=True)
    helper.start()
    try:
        yield
    finally:
        done.set()
        helper.join(10)


# -- non-regular files ------------------------------------------------------------------------


async def test_view_write_and_edit_refuse_a_fifo_at_once(files: Files) -> None:
    fifo = files.root / "pipe"
    os.mkfifo(fifo)
    with fifo_rescue(fifo):
        viewed = await files("view", path="pipe")
        written = await files("write", path="pipe", content="data")
        edited = await files("edit", path="pipe", old="a", new="b")
    for result in (viewed, written, edited):
        assert result.is_error
        assert result.text_content().startswith(
            "pipe is a named pipe (FIFO), not a regular file; the file tools only read and "
            "write regular files"
        )
    assert (await files("undo_edit", path="pipe")).is_error


async def test_a_socket_is_refused_with_a_clear_message(files: Files, tmp_path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    path = files.root / "sock"
    server.bind(str(path))
    try:
        for result in (
            await files("view", path="sock"),
            await files("write", path="sock", content="x"),
        ):
            assert result.is_error
            assert result.text_content().startswith("sock is a socket, not a regular file")
    finally:
        server.close()


async def test_tree_lists_a_fifo_without_opening_it(files: Files) -> None:
    os.mkfifo(files.root / "pipe")
    (files.root / "a.txt").write_text("one\ntwo\n")
    with fifo_rescue(files.root / "pipe"):
        listing = await files("tree")
    assert listing.text_content() == "a.txt (2 lines)\npipe (a named pipe (FIFO))"


async def test_a_stuck_disk_neither_freezes_the_event_loop_nor_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """File I/O runs in a thread with a time limit: while a read hangs, other coroutines run
    and the call ends with an error when its time is up."""
    files = Files(tmp_path, DeveloperSettings(file_timeout_secs=0.5))
    (tmp_path / "slow.txt").write_text("eventually\n")
    release = threading.Event()
    import gosling.agent.tools.developer.files as file_module

    real_read = getattr(file_module, "read_regular", None)

    def stuck_read(*args: Any) -> bytes:
        release.wait(10)  # until the test lets go (bounded, in case the loop is blocked)
        assert real_read is not None
        return real_read(*args)  # type: ignore[no-any-return]

    monkeypatch.setattr(file_module, "read_regular", stuck_read, raising=False)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    running = asyncio.create_task(ticker())
    try:
        result = await files("edit", path="slow.txt", old="eventually", new="now")
    finally:
        release.set()
        running.cancel()
    assert result.is_error
    assert result.text_content().startswith("edit did not finish within 0.5s")
    assert ticks > 5, "the event loop was blocked while the file tool waited"


# -- undo -------------------------------------------------------------------------------------


async def test_undo_refuses_when_the_file_changed_after_the_edit(files: Files) -> None:
    target = files.root / "notes.txt"
    target.write_text("draft one\n")
    edited = await files("edit", path="notes.txt", old="one", new="two")
    assert not edited.is_error
    target.write_text("draft two\nthe user's own line\n")
    undone = await files("undo_edit", path="notes.txt")
    assert undone.is_error
    assert undone.text_content().startswith(
        "Not undone: notes.txt changed after gosling's last write or edit of it"
    )
    assert target.read_text() == "draft two\nthe user's own line\n"
    target.unlink()
    gone = await files("undo_edit", path="notes.txt")
    assert gone.is_error and "(it was deleted)" in gone.text_content()
    assert not target.exists()


async def test_undo_still_walks_back_several_own_changes(files: Files) -> None:
    target = files.root / "f.txt"
    await files("write", path="f.txt", content="v1\n")
    await files("edit", path="f.txt", old="v1", new="v2")
    assert not (await files("undo_edit", path="f.txt")).is_error
    assert target.read_text() == "v1\n"
    assert not (await files("undo_edit", path="f.txt")).is_error
    assert not target.exists()


# -- symlink swaps ----------------------------------------------------------------------------


def swap_to_symlink(directory: Path, outside: Path) -> None:
    """Replace `directory` by a symlink to `outside` (what an attacker races to do)."""
    directory.rename(directory.with_name(directory.name + ".real"))
    directory.symlink_to(outside, target_is_directory=True)


async def test_a_directory_swapped_for_a_symlink_after_the_check_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The swap lands exactly between the path check and the open: the worst case of the race."""
    root, outside = tmp_path / "project", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "f.txt").write_text("outside, untouched\n")
    (root / "sub" / "f.txt").write_text("inside\n")
    files = Files(root)
    real_resolve = DeveloperState.resolve

    def resolve_then_swap(self: DeveloperState, raw: str, *args: Any, **kwargs: Any) -> Path:
        resolved = real_resolve(self, raw, *args, **kwargs)
        if (root / "sub").is_dir() and not (root / "sub").is_symlink():
            swap_to_symlink(root / "sub", outside)
        return resolved

    monkeypatch.setattr(DeveloperState, "resolve", resolve_then_swap)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("write", {"path": "sub/f.txt", "content": "pwned\n"}),
        ("edit", {"path": "sub/f.txt", "old": "inside", "new": "pwned"}),
        ("view", {"path": "sub/f.txt"}),
    ]
    for name, arguments in calls:
        if (root / "sub").is_symlink():
            (root / "sub").unlink()
            (root / "sub.real").rename(root / "sub")
        result = await files(name, **arguments)
        assert result.is_error, (name, result.text_content())
        assert "changed while gosling was using it" in result.text_content()
        assert "outside, untouched" not in result.text_content()
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]
    assert (outside / "f.txt").read_text() == "outside, untouched\n"


SWAPPER = """
import ctypes, os, sys
sub, outside, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
link = sub + ".link"
os.symlink(outside, link)
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
print("ready", flush=True)
for _ in range(rounds):
    if libc.renameat2(AT_FDCWD, os.fsencode(sub), AT_FDCWD, os.fsencode(link), RENAME_EXCHANGE):
        raise OSError(ctypes.get_errno(), "renameat2")
"""


def race(root: Path, outside: Path, rounds: int, attempt: Callable[[], None]) -> int:
    """Run `attempt` over and over while another process atomically swaps the directory
    `root/sub` with a symlink to `outside` `rounds` times (renameat2 RENAME_EXCHANGE, so
    `sub` always exists); returns how many attempts ran."""
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(root / "sub"), str(outside), str(rounds)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert swapper.stdout is not None and swapper.stderr is not None
    if swapper.stdout.readline().strip() != "ready":
        swapper.kill()
        pytest.skip(f"cannot swap atomically here: {swapper.communicate(timeout=10)[1]}")
    attempts = 0
    try:
        while swapper.poll() is None:
            attempt()
            attempts += 1
    finally:
        swapper.kill()
        swapper.wait(10)
    assert swapper.returncode == 0 or attempts > 0, swapper.stderr.read()
    return attempts


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux-only")
def test_writes_never_land_outside_while_a_symlink_is_swapped_in_a_loop(tmp_path: Path) -> None:
    root, outside = tmp_path / "project", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    files = Files(root)
    loop = asyncio.new_event_loop()
    outcomes: dict[str, int] = {}

    def attempt() -> None:
        result = loop.run_until_complete(
            asyncio.wait_for(files("write", path="sub/f.txt", content="inside only\n"), 10)
        )
        key = "refused" if result.is_error else "written"
        outcomes[key] = outcomes.get(key, 0) + 1

    try:
        attempts = race(root, outside, 20_000, attempt)
    finally:
        loop.close()
    assert attempts > 0
    assert list(outside.iterdir()) == [], f"a write escaped the workspace ({outcomes})"


async def test_writing_over_a_directory_says_to_give_a_file_path(files: Files) -> None:
    (files.root / "src").mkdir()
    result = await files("write", path="src", content="x")
    assert result.is_error and result.text_content() == "src is a directory; give a file path."
