"""Session store: commit of one turn (one transaction) and load of a 10,000-message session.

Targets (issue 4): <= 2 ms median per turn, <= 200 ms per 10,000-message load.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse
from gosling.providers import Usage
from gosling.sessions import SessionChanges, SqliteSessionStore, UsageRecord, export_session

TURNS = 400
LOAD_MESSAGES = 10_000
LOADS = 11


def _turn(i: int) -> SessionChanges:
    """What one tool-loop iteration writes: the assistant's call, the result, the usage."""
    call = ToolRequest(id=f"c{i}", name="developer__shell", arguments={"command": f"rg item_{i}"})
    output = "\n".join(f"src/module_{j}.py:{j * 7}: item_{i} = compute({j})" for j in range(12))
    return SessionChanges(
        append=(
            Message.assistant(f"Looking for item {i}.", call),
            Message.user(None, ToolResponse(id=f"c{i}", content=(TextContent(text=output),))),
        ),
        usage=(UsageRecord(Usage(input_tokens=20_000 + i, output_tokens=80), model="bench"),),
    )


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _commit_turns(directory: Path, synchronous: Literal["normal", "full"]) -> dict[str, float]:
    turns = [_turn(i) for i in range(TURNS)]
    with SqliteSessionStore(directory / f"{synchronous}.db", synchronous=synchronous) as store:
        session = store.create(working_dir="/bench")
        store.open_for_writing(session.id)
        times = []
        for changes in turns:
            start = time.perf_counter()
            store.commit(session.id, changes)
            times.append((time.perf_counter() - start) * 1000)
    return {
        "median_ms": round(statistics.median(times), 3),
        "p95_ms": round(_percentile(times, 0.95), 3),
    }


def _load(directory: Path) -> dict[str, float]:
    db = directory / "load.db"
    with SqliteSessionStore(db) as store:
        session = store.create(working_dir="/bench")
        batch: list[Message] = []
        for i in range(LOAD_MESSAGES // 2):
            batch.extend(_turn(i).append)
            if len(batch) >= 1000:
                store.append_messages(session.id, batch)
                batch = []
        store.append_messages(session.id, batch)
    times = []
    cpu_times = []  # CPU time of this process: what the load costs, without other processes
    with SqliteSessionStore(db) as store:
        for _ in range(LOADS):
            start, cpu_start = time.perf_counter(), time.process_time()
            messages = store.load_messages(session.id)
            times.append((time.perf_counter() - start) * 1000)
            cpu_times.append((time.process_time() - cpu_start) * 1000)
        assert len(messages) == LOAD_MESSAGES
        start = time.perf_counter()
        exported = export_session(store, session.id, "jsonl")
        export_ms = (time.perf_counter() - start) * 1000
    return {
        "load_10k_median_ms": round(statistics.median(times), 1),
        "load_10k_min_ms": round(min(times), 1),
        "load_10k_cpu_median_ms": round(statistics.median(cpu_times), 1),
        "export_10k_jsonl_ms": round(export_ms, 1),
        "db_mb": round(db.stat().st_size / 1e6, 2),
        "jsonl_mb": round(len(exported.encode()) / 1e6, 2),
    }


def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        return {
            "turn_commit_sync_normal": _commit_turns(directory, "normal"),
            "turn_commit_sync_full": _commit_turns(directory, "full"),
            **_load(directory),
        }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
