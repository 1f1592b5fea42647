"""One line about a tool's result for progress output: how much it printed, or why it
failed, counted and quoted from what the tool itself wrote, not gosling's wrapper lines
(the shell tool's `Exit code: N` and `--- stdout ---` headers)."""

from __future__ import annotations

import re

_WRAPPER = re.compile(r"^(Exit code: -?\d+|--- (stdout|stderr)(:[^\n]*)? ---)$")
_EXIT = re.compile(r"^Exit code: (-?\d+)$", re.MULTILINE)
_STDERR = re.compile(r"^--- stderr(?::[^\n]*)? ---$", re.MULTILINE)


def content_lines(output: str) -> list[str]:
    """The lines the tool produced, without the shell tool's status and section headers."""
    return [line for line in output.splitlines() if not _WRAPPER.match(line.strip())]


def failed(output: str, is_error: bool) -> bool:
    """The tool failed, or the command it ran exited non-zero."""
    code = _EXIT.match(output)
    return is_error or (code is not None and code.group(1) != "0")


def summary(output: str, is_error: bool, width: int = 160) -> str:
    """`3 lines`, `no output`, or for a failure its reason (`exit 2: No such file`)."""
    if not failed(output, is_error):
        count = sum(1 for line in content_lines(output) if line.strip())
        return "no output" if count == 0 else f"{count} line{'s' if count != 1 else ''}"
    reason = _failure_reason(output)
    return reason if len(reason) <= width else reason[: width - 1] + "…"


def _failure_reason(output: str) -> str:
    exit_match = _EXIT.search(output)
    stderr_match = _STDERR.search(output)
    if stderr_match is not None:
        tail = output[stderr_match.end() :].strip().splitlines()
        said = next((line.strip() for line in reversed(tail) if line.strip()), "")
    else:
        said = next((line.strip() for line in content_lines(output) if line.strip()), "")
    if exit_match is not None:
        code = f"exit {exit_match.group(1)}"
        return f"{code}: {said}" if said else code
    return said or "failed (no message)"
