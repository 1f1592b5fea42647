"""Tool faults as a user meets them: `gosling run` against the loopback fake server, with a
FIFO in the project and an MCP server that answers with 20 MB."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gosling.sessions import SqliteSessionStore
from tests.agent.test_run_e2e import gosling_env, repo, run_args, server, tool
from tests.fakes import FakeLLMServer, Turn

REPO = Path(__file__).resolve().parents[2]
BIG_SERVER = REPO / "tests" / "fakes" / "big_mcp_server.py"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX FIFOs")
__all__ = ["repo", "server"]  # fixtures shared with test_run_e2e


def run(args: list[str], cwd: Path, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    """`gosling ARGS`; a hang fails the test after `timeout` seconds (the child is killed)."""
    return subprocess.run(
        [sys.executable, "-m", "gosling", *args],
        cwd=cwd,
        env=gosling_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_view_and_write_of_a_fifo_are_refused_instead_of_hanging(
    repo: Path, server: FakeLLMServer
) -> None:
    os.mkfifo(repo / "pipe")
    server.add(
        tool("developer__view", path="pipe"),
        tool("developer__write", path="pipe", content="hello"),
        Turn(text="Both refused."),
    )
    result = run(run_args(server, "openai", "-t", "read the pipe"), repo, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Both refused.\n"
    final = json.dumps(server.model_requests()[-1].body["messages"])
    assert final.count("pipe is a named pipe (FIFO), not a regular file") == 2


def test_a_20_mb_mcp_result_is_capped_in_the_store_and_the_request(
    repo: Path, server: FakeLLMServer
) -> None:
    server.add(tool("big__dump", megabytes=20), Turn(text="Seen the head."))
    spec = f"big:{sys.executable} {BIG_SERVER}"
    result = run(
        run_args(server, "openai", "--with-extension", spec, "-t", "dump it"), repo, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Seen the head.\n"

    request = json.dumps(server.model_requests()[1].body)
    assert len(request) < 200_000
    assert "FIRST LINE" in request and "LAST LINE" not in request

    data = Path(os.environ["GOSLING_HOME"]) / "data"
    store = SqliteSessionStore.open_default(data)
    try:
        (session,) = store.list_sessions()
        answer = next(m for m in store.load_messages(session.id) if m.tool_responses)
        text = answer.tool_responses[0].text()
    finally:
        store.close()
    assert len(text.encode()) < 51_000
    assert text.startswith("FIRST LINE\nid,region,amount")
    saved = re.search(r"the full output is in (\S+);", text)
    assert saved, text[-400:]
    spill = Path(saved.group(1))
    assert spill.stat().st_size > 20_000_000
    with spill.open("rb") as handle:
        handle.seek(-10, os.SEEK_END)
        assert handle.read() == b"LAST LINE\n"
    spill.unlink()
    database = sum(f.stat().st_size for f in data.glob("sessions.db*"))
    assert database < 5_000_000
