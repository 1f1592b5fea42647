"""A task's own working directory: a fresh copy or clone, then its setup command.

Every attempt starts from scratch (a retried task never sees the half-done work of the
attempt that died), and no two tasks share a directory: each is `<work root>/<task id>`.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import IO

from gosling.agent.sandbox.lifetime import die_with_parent_hook
from gosling.batch.tasks import TaskSpec

SETUP_OUTPUT_TAIL = 2000
"""Characters of a failed setup command's output quoted in the task's error."""


class PrepareFailed(Exception):
    """The working directory could not be made ready; the message says why."""


class PrepareTimedOut(PrepareFailed):
    pass


def _run(argv: list[str], cwd: Path, log: IO[str], deadline: float | None, what: str) -> None:
    """Run in a new process group, output to `log`; past `deadline` (a `time.monotonic()`
    instant) the whole group is killed."""
    timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=die_with_parent_hook(),  # a worker killed with its driver takes it along
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise PrepareTimedOut(f"{what} did not finish within the task's timeout") from None
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    log.write(output)
    if process.returncode != 0:
        tail = output[-SETUP_OUTPUT_TAIL:].strip()
        raise PrepareFailed(f"{what} failed with exit code {process.returncode}: {tail}")


def prepare_working_dir(
    task: TaskSpec, work: Path, log: IO[str], deadline: float | None = None
) -> None:
    """Make `work` the task's fresh working directory and run its setup command there."""
    if work.exists() or work.is_symlink():
        shutil.rmtree(work)
    work.parent.mkdir(parents=True, exist_ok=True)
    if task.working_dir is not None:
        try:
            shutil.copytree(task.working_dir, work, symlinks=True)
        except (OSError, shutil.Error) as exc:
            raise PrepareFailed(f"cannot copy {task.working_dir}: {exc}") from exc
    elif task.repo is not None:
        log.write(f"$ git clone {task.repo}\n")
        clone = ["git", "clone", "--quiet", "--", task.repo, str(work)]
        _run(clone, work.parent, log, deadline, "git clone")
        if task.ref is not None:
            checkout = ["git", "checkout", "--quiet", task.ref, "--"]
            _run(checkout, work, log, deadline, f"git checkout {task.ref}")
    else:
        work.mkdir()
    if task.setup is not None:
        log.write(f"$ {task.setup}\n")
        _run(["bash", "-c", task.setup], work, log, deadline, "the setup command")
