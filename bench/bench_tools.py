"""Tools under big inputs: an ambiguous edit on 2 MB of CSV, and a 20 MB MCP tool result.

- `edit_25k_matches`: the `developer__edit` tool on a 2 MB CSV where `old` occurs 25,000
  times (refused as ambiguous): wall time, the longest the event loop went without running
  (another coroutine ticking every 10 ms), and the size of the error the model gets.
- `mcp_20mb`: a real `gosling run` (subprocess) against the loopback fake LLM server, with
  `tests/fakes/big_mcp_server.py` answering one call with 20 MB: peak RSS of the gosling
  process (`VmHWM`, polled), wall time, the size of the next model request, and the growth of
  the session database; `mcp_10kb_baseline` is the same run with a 10 KB answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
ROWS = 25_000


def _csv() -> str:
    row = "{n},north,{amount},{pad}\n"
    lines = [row.format(n=n, amount=n % 97, pad="p" * 62) for n in range(ROWS)]
    return "id,region,amount,pad\n" + "".join(lines)


async def _edit_once(root: Path) -> dict[str, Any]:
    from gosling.agent.tools import ToolContext
    from gosling.agent.tools.developer import developer_extension

    edit = next(t for t in developer_extension().tools() if t.name == "edit")
    longest_gap = 0.0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal longest_gap
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            longest_gap = max(longest_gap, now - last)
            last = now

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0.02)
    start = time.perf_counter()
    result = await edit.call(
        {"path": "data.csv", "old": ",north,", "new": ",south,"}, ToolContext(root)
    )
    elapsed = time.perf_counter() - start
    stop.set()
    await ticking
    return {
        "seconds": round(elapsed, 3),
        "loop_blocked_max_s": round(longest_gap, 3),
        "error_chars": len(result.text_content()),
        "refused": result.is_error,
    }


def bench_edit() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        text = _csv()
        (root / "data.csv").write_text(text)
        figures = asyncio.run(_edit_once(root))
        figures["file_bytes"] = len(text)
        figures["matches"] = text.count(",north,")
        return figures


def _peak_rss_kb(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def bench_mcp(megabytes: float) -> dict[str, Any]:
    sys.path.insert(0, str(REPO))
    from tests.fakes import FakeLLMServer, FakeToolCall, Turn

    with tempfile.TemporaryDirectory() as tmp, FakeLLMServer() as server:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        work.mkdir()
        call = FakeToolCall("big__dump", {"megabytes": megabytes})
        server.add(Turn(tool_calls=[call]), Turn(text="ok"))
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env.update(
            GOSLING_HOME=str(home),
            OPENAI_API_KEY="bench",
            GOSLING_MAX_RETRIES="0",
            PYTHONPATH=str(REPO),
            TMPDIR=tmp,
        )
        spec = f"big:{sys.executable} {REPO / 'tests' / 'fakes' / 'big_mcp_server.py'}"
        args = [sys.executable, "-m", "gosling", "run", "--provider", "openai"]
        args += ["--model", "bench", "--base-url", server.openai_url, "--with-extension", spec]
        start = time.perf_counter()
        proc = subprocess.Popen(
            [*args, "-t", "dump"],
            cwd=work,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        peak = 0
        while proc.poll() is None:
            peak = max(peak, _peak_rss_kb(proc.pid))
            time.sleep(0.02)
            if time.perf_counter() - start > 300:
                proc.kill()
        elapsed = time.perf_counter() - start
        requests = server.model_requests()
        database = sum(f.stat().st_size for f in (home / "data").glob("sessions.db*"))
        return {
            "exit_code": proc.returncode,
            "seconds": round(elapsed, 2),
            "peak_rss_mb": round(peak / 1024, 1),
            "next_request_bytes": len(json.dumps(requests[1].body)) if len(requests) > 1 else None,
            "database_bytes": database,
        }


def run() -> dict[str, Any]:
    return {
        "edit_25k_matches": bench_edit(),
        "mcp_20mb": bench_mcp(20),
        "mcp_10kb_baseline": bench_mcp(0.01),
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
