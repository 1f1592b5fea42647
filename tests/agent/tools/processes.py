"""Helpers for tests that check which processes are still running."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path


def is_running(pid: int) -> bool:
    """True while `pid` runs; a zombie (exited, not yet reaped) counts as gone."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc").is_dir():
        try:
            text = stat.read_text()
        except OSError:
            return False
        return text[text.rindex(")") + 2 :].split()[0] not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def children_running(marker: str) -> list[int]:
    """Live direct children of this process whose command line contains `marker`."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            cmdline = Path(entry.path, "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == os.getpid() and marker.encode() in cmdline and fields[0] != "Z":
            found.append(int(entry.name))
    return found


async def wait_until(condition: Callable[[], bool], within: float = 10.0) -> None:
    """Wait for observable state; fail with a clear message if it never comes."""
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {within}s")
        await asyncio.sleep(0.02)


def processes_running(argv: list[str]) -> list[int]:
    """Live processes, anywhere on the machine (sandboxes included), whose command line is
    exactly `argv`: tests give each process they look for a unique one."""
    wanted = "\0".join(argv).encode() + b"\0"
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if Path(entry.path, "cmdline").read_bytes() == wanted and is_running(int(entry.name)):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def wait_until_sync(condition: Callable[[], bool], within: float = 10.0) -> None:
    """`wait_until` for synchronous tests."""
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {within}s")
        time.sleep(0.02)
