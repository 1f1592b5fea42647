"""The seccomp filter of the sandbox: no unix socket and no io_uring inside, everything else
as before; and a filter that cannot be opened stops the command instead of running it bare."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import pytest

from gosling.agent.sandbox import SandboxPolicy, choose_sandbox
from gosling.agent.sandbox.seccomp import filter_file, filter_program
from tests.agent.sandbox.conditions import needs_bwrap
from tests.agent.sandbox.test_bwrap import shell

pytestmark = needs_bwrap

PROBE = """
import ctypes, errno, socket
def attempt(name, call):
    try:
        call()
        print(name, "allowed")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
attempt("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))
attempt("inet", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
attempt("pair", socket.socketpair)
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
nr = {"x86_64": 425, "aarch64": 425}[__import__("platform").machine()]
fd = libc.syscall(nr, 1, params)
print("io_uring", "allowed" if fd >= 0 else errno.errorcode[ctypes.get_errno()])
"""


def _policy(workspace: Path, filters: Path | None) -> SandboxPolicy:
    choice = choose_sandbox("workspace-write", workspace=workspace, filters=filters)
    assert choice.policy is not None
    return choice.policy


@pytest.mark.skipif(filter_program() is None, reason=f"no filter for {platform.machine()}")
async def test_unix_sockets_and_io_uring_are_refused_and_the_rest_works(tmp_path: Path) -> None:
    (tmp_path / "probe.py").write_text(PROBE)
    command = f"{sys.executable} probe.py"
    bare = await shell(tmp_path, command, _policy(tmp_path, None))
    assert "unix allowed" in bare  # what the filter changes: without it the call succeeds
    filtered = await shell(tmp_path, command, _policy(tmp_path, tmp_path / "filters"))
    assert "unix EPERM" in filtered and "io_uring EPERM" in filtered
    assert "inet allowed" in filtered and "pair allowed" in filtered


async def test_a_filter_that_cannot_be_opened_stops_the_command(tmp_path: Path) -> None:
    policy = _policy(tmp_path, tmp_path / "filters")
    if policy.seccomp is None:
        pytest.skip(f"no filter for {platform.machine()}")
    policy.seccomp.unlink()
    output = await shell(tmp_path, "echo RAN > ran.txt", policy)
    assert not (tmp_path / "ran.txt").exists()
    assert "Exit code: 0" not in output


def test_the_filter_file_is_written_once_and_machines_without_one_get_none(
    tmp_path: Path,
) -> None:
    assert filter_program("riscv64") is None
    first = filter_file(tmp_path)
    if first is None:
        pytest.skip(f"no filter for {platform.machine()}")
    assert filter_file(tmp_path) == first and first.read_bytes() == filter_program()
    assert [p.name for p in tmp_path.iterdir()] == [first.name]  # no partial files left
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("")
    assert filter_file(blocked) is None  # unwritable: no filter, and the caller knows
