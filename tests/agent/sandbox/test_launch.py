"""Starting and awaiting tool processes: a call cancelled while its process is starting,
and waiting on a process that `spawn` did not start."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from gosling.agent.sandbox.launch import plan_launch, spawn, wait_exit
from gosling.agent.sandbox.lifetime import kill_marked, marked_processes
from gosling.agent.sandbox.policy import CALL_MARKER_VAR


async def test_a_call_cancelled_while_its_process_starts_leaves_nothing_running(
    tmp_path: Path,
) -> None:
    launch = plan_launch(
        ["sleep", "3000.401"], cwd=tmp_path, env={"PATH": os.environ["PATH"]}, sandbox=None
    )
    quiet = {name: subprocess.DEVNULL for name in ("stdin", "stdout", "stderr")}
    call = asyncio.create_task(spawn(launch, **quiet))
    await asyncio.sleep(0)  # one turn of the loop: the call now waits for the start
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    # Whatever the start left behind has run to its end now.
    others = asyncio.all_tasks() - {asyncio.current_task()}
    await asyncio.gather(*others, return_exceptions=True)
    try:
        assert marked_processes(CALL_MARKER_VAR, launch.marker) == []
    finally:
        kill_marked(CALL_MARKER_VAR, launch.marker)


async def test_waiting_on_a_process_spawn_did_not_start_ends_with_its_exit() -> None:
    process = await asyncio.create_subprocess_exec("sh", "-c", "exit 3")
    await asyncio.wait_for(wait_exit(process), 30)
    assert process.returncode == 3


async def test_a_tool_process_runs_in_a_session_of_its_own(tmp_path: Path) -> None:
    """So the terminal's Ctrl-C and job-control signals reach gosling, which stops the call
    itself, and stopping the call's process group reaches everything the command started."""
    launch = plan_launch(
        ["sleep", "3000.402"], cwd=tmp_path, env={"PATH": os.environ["PATH"]}, sandbox=None
    )
    process = await spawn(launch, stdin=subprocess.DEVNULL)
    try:
        assert os.getsid(process.pid) == process.pid
        assert os.getpgid(process.pid) == process.pid
        assert os.getpgid(process.pid) != os.getpgid(0)
    finally:
        process.kill()
        await wait_exit(process)


async def test_releasing_an_ended_process_closes_its_pipes_even_when_a_child_holds_them(
    tmp_path: Path,
) -> None:
    """Every call's pipes go with it, also when a background child of the command still holds
    them open: a long session must not run out of file descriptors."""
    from gosling.agent.sandbox.launch import release

    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    before = open_fds()
    for n in range(3):
        command = f"(exec sleep 3000.40{n}) & echo out"
        launch = plan_launch(
            ["sh", "-c", command], cwd=tmp_path, env={"PATH": os.environ["PATH"]}, sandbox=None
        )
        pipes = {name: subprocess.PIPE for name in ("stdin", "stdout", "stderr")}
        process = await spawn(launch, **pipes)
        try:
            assert process.stdout is not None
            assert await process.stdout.readline() == b"out\n"
            await release(process)
        finally:
            kill_marked(CALL_MARKER_VAR, launch.marker)
    await asyncio.sleep(0)  # closing completes on the loop's next turn
    assert open_fds() == before


def test_leftovers_of_a_launch_are_stopped_also_without_its_process(tmp_path: Path) -> None:
    """As for an MCP server the SDK started: no process object, every process is looked at."""
    launch = plan_launch(
        ["sleep", "3000.404"], cwd=tmp_path, env={"PATH": os.environ["PATH"]}, sandbox=None
    )
    leftover = subprocess.Popen(launch.argv, env=launch.env)
    try:
        assert launch.kill_leftovers() == 1
        assert leftover.wait(timeout=30) == -9
    finally:
        leftover.kill()
        leftover.wait()


async def test_a_call_cancelled_while_its_command_fails_to_start_is_still_cancelled(
    tmp_path: Path,
) -> None:
    """Its working directory is gone: the start fails, but the caller asked to stop, and a
    stop must read as one (not as the start's error)."""
    launch = plan_launch(
        ["true"], cwd=tmp_path / "gone", env={"PATH": os.environ["PATH"]}, sandbox=None
    )
    call = asyncio.create_task(spawn(launch, stdin=subprocess.DEVNULL))
    await asyncio.sleep(0)  # one turn of the loop: the call now waits for the start
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call


async def test_releasing_a_process_that_outlives_the_grace_leaves_it_to_be_stopped(
    tmp_path: Path,
) -> None:
    """Closing its transport now would have asyncio kill it and reap it behind the child
    watcher; the caller stops it, and its exit status still arrives."""
    from gosling.agent.sandbox.launch import release

    launch = plan_launch(
        ["sleep", "3000.405"], cwd=tmp_path, env={"PATH": os.environ["PATH"]}, sandbox=None
    )
    process = await spawn(launch, stdin=subprocess.DEVNULL)
    try:
        await release(process, grace=0)
        # Closing the transport of a running child is asyncio's way of killing it.
        transport = process._transport  # type: ignore[attr-defined]
        assert not transport.is_closing()
        assert process.returncode is None
    finally:
        process.kill()
        await wait_exit(process)
    assert process.returncode == -9
