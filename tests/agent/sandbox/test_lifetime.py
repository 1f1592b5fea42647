"""The exec guard that starts tool processes without copying gosling."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gosling.agent.sandbox.lifetime import PidWindow, exec_guard, marked_processes

needs_setpriv = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("setpriv") is None,
    reason="the exec guard needs Linux and util-linux's setpriv",
)

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's"
)


def in_fresh_python(script: str, **options: Any) -> str:
    """What `script` prints, run by a fresh interpreter (which can fork without threads)."""
    done: subprocess.CompletedProcess[str] = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, **options
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@needs_setpriv
def test_the_guard_runs_the_command_when_its_parent_is_gosling(tmp_path: Path) -> None:
    argv, preexec = exec_guard(["touch", "ran"])
    assert preexec is None  # nothing runs in the child before exec: CPython may vfork
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "ran").exists()


@needs_setpriv
def test_the_guard_refuses_to_run_when_its_parent_is_not_gosling(tmp_path: Path) -> None:
    """What a child sees when gosling died before the signal was armed: another parent."""
    argv, _ = exec_guard(["touch", "ran"])
    via_another_parent = ["sh", "-c", '"$@"; echo "exit $?"', "other-parent", *argv]
    done = subprocess.run(via_another_parent, cwd=tmp_path, capture_output=True, text=True)
    assert done.stdout.strip() == "exit 125"
    assert not (tmp_path / "ran").exists()


def test_the_pid_window_finds_a_marked_process_started_after_it_opened(tmp_path: Path) -> None:
    first = subprocess.Popen(["true"])
    first.wait()
    window = PidWindow(first.pid, time.monotonic())
    env = {**os.environ, "GOSLING_TEST_MARK": "window-test"}
    later = subprocess.Popen(["sleep", "30"], env=env)
    try:
        assert marked_processes("GOSLING_TEST_MARK", "window-test", window) == [later.pid]
    finally:
        later.kill()
        later.wait()


@linux_only
def test_without_setpriv_the_preexec_guard_still_runs_the_command(tmp_path: Path) -> None:
    """The fallback where util-linux's setpriv is missing: the hook arms the signal in the
    child and lets the command run while its parent is gosling."""
    from gosling.agent.sandbox.lifetime import die_with_parent_hook

    hook = die_with_parent_hook()
    assert hook is not None
    done = subprocess.run(["touch", "ran"], cwd=tmp_path, preexec_fn=hook, timeout=30)
    assert done.returncode == 0
    assert (tmp_path / "ran").exists()


@linux_only
def test_without_setpriv_a_child_whose_gosling_is_gone_does_not_run_its_command() -> None:
    """The preexec guard run in a process whose parent is no longer the gosling that made
    it (here a newer process, as a subreaper that adopted it would be): the command must not
    start unwatched. Run in a fresh interpreter, which can fork without threads."""
    script = (
        "import os\n"
        "from gosling.agent.sandbox.lifetime import die_with_parent_hook\n"
        "hook = die_with_parent_hook()\n"
        "adopter = os.fork()\n"
        "if adopter == 0:\n"
        "    child = os.fork()\n"
        "    if child == 0:\n"
        "        hook()\n"
        "        os._exit(0)\n"
        "    os._exit(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]))\n"
        "print(os.waitstatus_to_exitcode(os.waitpid(adopter, 0)[1]))\n"
    )
    assert in_fresh_python(script) == "1"


FAKE_PID = 1 << 23
"""Above the kernel's largest pid (2**22), so no fake process is the test's own."""


def fake_proc(tmp_path: Path, marked: list[int], last_pid: str | None) -> Path:
    """A procfs stand-in: each pid in `marked` carries the marker; `last_pid` is what
    `/proc/sys/kernel/ns_last_pid` holds (None: the file is missing)."""
    proc = tmp_path / "proc"
    for pid in marked:
        (proc / str(FAKE_PID + pid)).mkdir(parents=True)
        (proc / str(FAKE_PID + pid) / "environ").write_bytes(b"PATH=/bin\0MARK=call-1\0")
    (proc / "self").mkdir(parents=True)
    if last_pid is not None:
        (proc / "sys" / "kernel").mkdir(parents=True)
        (proc / "sys" / "kernel" / "ns_last_pid").write_text(last_pid)
    return proc


def found(proc: Path, window: PidWindow | None) -> list[int]:
    return [pid - FAKE_PID for pid in marked_processes("MARK", "call-1", window, proc)]


@pytest.mark.parametrize(
    ("first", "last", "expected"),
    [
        (100, 200, [100, 150, 200]),  # what started since the call's first process
        (100, 100, [100]),  # the call's process is the newest one
        (300, 50, [10, 50, 300, 400]),  # pids wrapped around pid_max since
    ],
    ids=["in-order", "one-process", "wrapped"],
)
def test_leftovers_are_looked_for_among_the_processes_started_during_the_call(
    tmp_path: Path, first: int, last: int, expected: list[int]
) -> None:
    """Older processes with the same marker (they cannot have one; here they do, to tell)
    are not read, and every process started since the call's first is."""
    proc = fake_proc(tmp_path, [10, 50, 51, 99, 100, 150, 200, 299, 300, 400], str(FAKE_PID + last))
    window = PidWindow(FAKE_PID + first, time.monotonic())
    assert found(proc, window) == expected
    assert found(proc, None) == [10, 50, 51, 99, 100, 150, 200, 299, 300, 400]


@pytest.mark.parametrize("last_pid", [None, "not a pid\n"], ids=["missing", "unreadable"])
def test_without_the_kernels_last_pid_every_process_is_looked_at(
    tmp_path: Path, last_pid: str | None
) -> None:
    proc = fake_proc(tmp_path, [5, 500], last_pid)
    assert found(proc, PidWindow(FAKE_PID + 100, time.monotonic())) == [5, 500]


@pytest.mark.parametrize(("age", "expected"), [(4.5, [150]), (5.5, [5, 150])])
def test_a_call_longer_than_five_seconds_looks_at_every_process(
    tmp_path: Path, age: float, expected: list[int]
) -> None:
    """Pids may have wrapped around past the window in a long call."""
    proc = fake_proc(tmp_path, [5, 150], str(FAKE_PID + 200))
    assert found(proc, PidWindow(FAKE_PID + 100, time.monotonic() - age)) == expected


def test_a_process_that_cannot_be_read_does_not_hide_the_ones_after_it(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path, [150], None)
    (proc / str(FAKE_PID + 100)).mkdir()  # its `environ` is not a file: reading it fails
    (proc / str(FAKE_PID + 100) / "environ").mkdir()
    assert found(proc, None) == [150]


def test_without_procfs_nothing_is_found(tmp_path: Path) -> None:
    assert marked_processes("MARK", "call-1", None, tmp_path / "no-proc") == []


def test_gosling_finds_older_marked_processes_but_never_itself(tmp_path: Path) -> None:
    """A gosling that carries a call's marker (one started by a tool call of another gosling)
    looks for that call's processes: it finds one started before it and leaves itself out."""
    env = {**os.environ, "GOSLING_TEST_MARK": "older-and-self"}
    older = subprocess.Popen(["sleep", "3000.301"], env=env)
    try:
        script = (
            "from gosling.agent.sandbox.lifetime import marked_processes\n"
            "print(marked_processes('GOSLING_TEST_MARK', 'older-and-self'))\n"
        )
        assert in_fresh_python(script, env=env) == str([older.pid])
    finally:
        older.kill()
        older.wait()


def guard_with_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, program: str
) -> tuple[list[str], object]:
    """`exec_guard` on a machine whose PATH holds only `program`."""
    from gosling.agent.sandbox import lifetime

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / program).symlink_to(shutil.which(program) or f"/bin/{program}")
    monkeypatch.setenv("PATH", str(bin_dir))
    lifetime._guard_tools.cache_clear()
    try:
        return exec_guard(["touch", "ran"])
    finally:
        lifetime._guard_tools.cache_clear()


@linux_only
def test_without_setpriv_on_the_path_the_guard_falls_back_to_the_preexec_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv, preexec = guard_with_only(tmp_path, monkeypatch, "sh")
    assert argv == ["touch", "ran"]
    assert preexec is not None


@linux_only
def test_without_setpriv_the_child_is_armed_to_be_killed_when_gosling_dies() -> None:
    """What the kernel holds for the child after the preexec hook: SIGKILL on parent death."""
    from gosling.agent.sandbox.lifetime import die_with_parent_hook

    hook = die_with_parent_hook()
    assert hook is not None
    ask = (
        "import ctypes, signal\n"
        "sig = ctypes.c_int(-1)\n"
        "ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG\n"
        "print(signal.Signals(sig.value).name if sig.value > 0 else sig.value)\n"
    )
    assert in_fresh_python(ask, preexec_fn=hook) == "SIGKILL"


@linux_only
def test_without_setpriv_a_child_adopted_by_an_older_process_does_not_run_its_command() -> None:
    """Gosling gone, the child is adopted by a subreaper started before it (a smaller pid, as
    init's is): the command must not start unwatched either."""
    script = (
        "import ctypes, os\n"
        "from gosling.agent.sandbox.lifetime import die_with_parent_hook\n"
        "ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER\n"
        "gosling = os.fork()\n"
        "if gosling == 0:\n"
        "    hook = die_with_parent_hook()\n"
        "    gone = os.getpid()\n"
        "    r, w = os.pipe()\n"
        "    if os.fork() == 0:\n"
        "        os.close(w)\n"
        "        os.read(r, 1)  # returns once gosling has exited and closed its end\n"
        "        while os.getppid() == gone:  # until the subreaper has adopted it\n"
        "            pass\n"
        "        hook()\n"
        "        os._exit(0)\n"
        "    os._exit(0)\n"
        "codes = [os.waitstatus_to_exitcode(os.wait()[1]) for _ in range(2)]\n"
        "print(sorted(codes))\n"
    )
    assert in_fresh_python(script) == "[0, 1]"


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("setpriv") is None,
    reason="the exec guard needs Linux and util-linux's setpriv",
)
def test_with_setpriv_but_no_sh_on_the_path_the_guard_uses_bin_sh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv, preexec = guard_with_only(tmp_path, monkeypatch, "setpriv")
    assert preexec is None
    assert argv[argv.index("--") + 1] == "/bin/sh"
