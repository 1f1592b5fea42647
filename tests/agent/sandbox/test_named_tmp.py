"""Which host `/tmp` entries a command names get shown read-only in the sandbox."""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from gosling.agent.sandbox.named_tmp import MAX_NAMED, named_tmp_entries


@pytest.fixture
def entry() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="gosling-named-", dir="/tmp"))
    try:
        yield path
    finally:
        for child in path.iterdir():
            child.unlink()
        path.rmdir()


def test_the_top_entry_of_each_named_path_is_shown(entry: Path) -> None:
    (entry / "today.txt").write_text("log")
    command = f"grep error {entry}/today.txt --log={entry}/missing && cat /tmp/nope-{os.getpid()}"
    assert named_tmp_entries(command) == [entry]  # once, and only what exists
    assert named_tmp_entries(f"ls /tmp/ /tmp/* {entry}/../x") == [entry]  # no tmp dir, no glob


def test_links_out_of_tmp_sockets_and_hidden_places_are_never_shown(entry: Path) -> None:
    link = Path(f"/tmp/gosling-link-{os.getpid()}")
    link.symlink_to("/etc/passwd")
    server = socket.socket(socket.AF_UNIX)
    sock = entry / "s"
    server.bind(str(sock))
    try:
        assert named_tmp_entries(f"cat {link}") == []
        assert named_tmp_entries(f"cat {sock}") == [entry]  # the dir; the socket is refused
        sock_entry = Path(f"/tmp/gosling-sock-{os.getpid()}")
        sock_entry.symlink_to(sock)
        try:
            assert named_tmp_entries(f"nc -U {sock_entry}") == []
        finally:
            sock_entry.unlink()
        assert named_tmp_entries(f"cat {entry}/x", hidden=[entry / "inner"]) == []
        assert named_tmp_entries(f"cat {entry}/x", hidden=[entry]) == []
    finally:
        server.close()
        link.unlink()


def test_at_most_a_bounded_number_of_entries_per_command() -> None:
    made = [Path(tempfile.mkdtemp(prefix="gosling-many-", dir="/tmp")) for _ in range(20)]
    try:
        shown = named_tmp_entries(" ".join(f"cat {m}/x;" for m in made))
        assert shown == made[:MAX_NAMED]
    finally:
        for m in made:
            m.rmdir()
