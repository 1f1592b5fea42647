"""`gosling batch`: 16 scripted tasks of 5 model calls each against a fake model that takes
200 ms per reply, run sequentially (`--workers 1`), on the local pool (`--workers 8`) and
on a local Ray instance (`--ray --workers 8 --cpus-per-task 0.25`), each as the real
command in a subprocess.

Figures per run: the command's wall time, and the batch span (first dispatch to last result
line, which leaves out the interpreter's start and the task file's parsing but keeps the
workers' start). gosling's overhead per task is `duration_ms` (dispatch to result line)
minus the model's 5 x 200 ms; the tool (`developer__view` of a one-line file) is counted as
overhead. "Warm" tasks are those not first on their worker process.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.fakes import FakeLLMServer, FakeToolCall, FakeUsage, Turn

ROOT = Path(__file__).resolve().parents[1]
TASKS = 16
CALLS = 5
REPLY_SECONDS = 0.2
MODEL_MS = CALLS * REPLY_SECONDS * 1000


def _script(server: FakeLLMServer) -> list[dict[str, Any]]:
    tasks = []
    for number in range(TASKS):
        marker = f"[bench-{number}]"
        view = Turn(
            tool_calls=[FakeToolCall("developer__view", {"path": "notes.txt"})],
            usage=FakeUsage(1000, 20),
            delay=REPLY_SECONDS,
        )
        final = Turn(text=f"Task {number} done.", usage=FakeUsage(1100, 10), delay=REPLY_SECONDS)
        server.add_conversation(marker, *([view] * (CALLS - 1)), final)
        tasks.append({"id": f"task-{number:02d}", "prompt": f"{marker} read the notes"})
    return tasks


def _run_batch(
    tasks_file: Path, out: Path, server: FakeLLMServer, env: dict[str, str], *args: str
) -> dict[str, Any]:
    command = [sys.executable, "-m", "gosling", "batch", str(tasks_file), "-o", str(out)]
    command += ["--provider", "anthropic", "--model", "claude-sonnet-4-5", "--base-url"]
    command += [server.url, *args]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"gosling batch {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    starts = [datetime.fromisoformat(r["started_at"]).timestamp() for r in lines]
    ends = [s + r["duration_ms"] / 1000 for s, r in zip(starts, lines, strict=True)]
    order = sorted(range(len(lines)), key=lambda i: starts[i])
    seen: Counter[str] = Counter()
    warm: list[float] = []
    cold: list[float] = []
    warm_durations: list[float] = []
    for i in order:
        overhead = (lines[i]["duration_ms"] - MODEL_MS) / 1000
        (warm if seen[lines[i]["worker"]] else cold).append(overhead)
        if seen[lines[i]["worker"]]:
            warm_durations.append(lines[i]["duration_ms"] / 1000)
        seen[lines[i]["worker"]] += 1
    return {
        "wall_s": round(wall, 3),
        "span_s": round(max(ends) - min(starts), 3),
        "workers_used": len(seen),
        "overhead_warm_median_s": round(statistics.median(warm), 3) if warm else None,
        "overhead_warm_max_s": round(max(warm), 3) if warm else None,
        "overhead_cold_median_s": round(statistics.median(cold), 3),
        "warm_task_median_s": round(statistics.median(warm_durations), 3),
        "warm_task_max_s": round(max(warm_durations), 3),
    }


def _warm_throughput_ratio(sequential: dict[str, Any], parallel: dict[str, Any]) -> float:
    """Tasks per second once every worker is warm, parallel over sequential: `workers`
    tasks take the slowest warm task's time in parallel, and that many warm tasks one after
    the other sequentially."""
    workers = int(parallel["workers_used"])
    ratio = workers * float(sequential["warm_task_median_s"]) / float(parallel["warm_task_max_s"])
    return round(ratio, 2)


def _warm_tokenizer_cache(env: dict[str, str]) -> None:
    """As on any machine that has run gosling once: the tokenizer's parsed cache exists."""
    code = "from gosling.context_mgmt.tokens import TokenCounter; TokenCounter().count_text('x')"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True)


def run() -> dict[str, Any]:
    load_at_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="gbb") as tmp, FakeLLMServer() as server:
        base = Path(tmp)
        project = base / "project"
        project.mkdir()
        (project / "notes.txt").write_text("remember the milk\n")
        tasks = [{**t, "working_dir": str(project)} for t in _script(server)]
        tasks_file = base / "tasks.jsonl"
        tasks_file.write_text("".join(json.dumps(t) + "\n" for t in tasks))
        env = {
            **os.environ,
            "GOSLING_HOME": str(base / "home"),
            "ANTHROPIC_API_KEY": "bench-key",
            "HOME": str(base / "home"),
            "RAY_TMPDIR": str(base),
            "RAY_AUTH_MODE": "disabled",
            "RAY_USAGE_STATS_ENABLED": "0",
        }
        _warm_tokenizer_cache(env)
        sequential = _run_batch(tasks_file, base / "seq", server, env, "--workers", "1")
        pool = _run_batch(tasks_file, base / "pool", server, env, "--workers", "8")
        on_ray = ["--workers", "8", "--cpus-per-task", "0.25", "--ray"]
        ray = _run_batch(tasks_file, base / "ray", server, env, *on_ray)
    return {
        "tasks": TASKS,
        "model_calls_per_task": CALLS,
        "reply_ms": REPLY_SECONDS * 1000,
        "sequential": sequential,
        "workers_8": pool,
        "ray_local": ray,
        "speedup_workers_8": round(sequential["wall_s"] / pool["wall_s"], 2),
        "speedup_workers_8_span": round(sequential["span_s"] / pool["span_s"], 2),
        "speedup_ray_local": round(sequential["wall_s"] / ray["wall_s"], 2),
        "speedup_ray_local_span": round(sequential["span_s"] / ray["span_s"], 2),
        "warm_throughput_ratio_workers_8": _warm_throughput_ratio(sequential, pool),
        "warm_throughput_ratio_ray_local": _warm_throughput_ratio(sequential, ray),
        "load_average_1m_start": round(load_at_start, 2),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "target_speedup_met": sequential["wall_s"] / pool["wall_s"] >= 5,
        "target_overhead_met": (pool["overhead_warm_median_s"] or 0) <= 0.3,
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
