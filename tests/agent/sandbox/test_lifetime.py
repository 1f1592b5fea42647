"""The exec guard that starts tool processes without copying gosling."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gosling.agent.sandbox.lifetime import PidWindow, exec_guard, marked_processes

needs_setpriv = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("setpriv") is None,
    reason="the exec guard needs Linux and util-linux's setpriv",
)


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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_without_setpriv_the_preexec_guard_still_runs_the_command(tmp_path: Path) -> None:
    """The fallback where util-linux's setpriv is missing: the hook arms the signal in the
    child and lets the command run while its parent is gosling."""
    from gosling.agent.sandbox.lifetime import die_with_parent_hook

    hook = die_with_parent_hook()
    assert hook is not None
    done = subprocess.run(["touch", "ran"], cwd=tmp_path, preexec_fn=hook, timeout=30)
    assert done.returncode == 0
    assert (tmp_path / "ran").exists()
