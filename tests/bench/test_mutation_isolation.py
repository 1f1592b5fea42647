"""The sandbox area's mutants run where a broken leftover scan cannot reach other processes:
a mutant of `kill_marked` that matches every process would otherwise SIGKILL the machine's
processes (it did, during a run: the shell that started it among them)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from bench.mutation import AREAS, _python


@pytest.mark.skipif(shutil.which("unshare") is None, reason="util-linux's unshare is missing")
def test_the_sandbox_areas_tests_see_only_their_own_processes() -> None:
    script = "import os; print(os.getpid(), len([p for p in os.listdir('/proc') if p.isdigit()]))"
    done = subprocess.run(
        [*_python(AREAS["sandbox"]), "-c", script], capture_output=True, text=True, timeout=60
    )
    if done.returncode != 0 and "Operation not permitted" in done.stderr:
        pytest.skip(f"no PID namespace here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    pid, visible = map(int, done.stdout.split())
    assert pid == 1  # the first process of a namespace of its own
    assert visible == 1  # and /proc shows nothing outside it


def test_areas_that_kill_no_processes_run_as_they_are() -> None:
    assert _python(AREAS["context"])[0] == "env"
