"""What a trim would have cost on a short session of small outputs, had the clock fired.

On `claude-reliability` (39 calls, mostly small outputs) the trim clock never fires, so
`hybrid` costs exactly what `none` costs. This asks what firing would have done: the
transcript is cut after each of its model calls (as if the session had ended there), and
the earliest possible trim (the first call with an old output to hide) is forced, alone. Each
figure is `hybrid`'s cost as a share of `none`'s on that shortened session. A trim is a bet on
the session going on: it pays once the calls after it have read back more than it re-sent.
Also reported: the best single forced trim on the whole transcript, which only hindsight
could choose. A what-if: the clock's decision is replaced for the measurement only.

`python -m bench hindsight` (about a minute).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

TRANSCRIPT = "claudecode_claude-reliability_python-to-rust-port.jsonl"


class _ForcedTrim:
    """Stands in for `TrimClock.due`: trims at the `at`-th call that has something to trim."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.eligible = 0

    def __call__(self, clock: Any, plan: Any) -> bool:
        if plan.empty or plan.saved_tokens <= 0:
            return False
        self.eligible += 1
        return self.eligible == self.at


async def _relative_cost(path: Path, at: int) -> tuple[float, int, int]:
    """hybrid's cost as a percentage of none's with one trim forced at the `at`-th eligible
    call; how many calls were eligible; how many model calls the session has."""
    from bench.bench_replay import WINDOW
    from gosling.agent.replay.results import ReplayOptions
    from gosling.agent.replay.run import replay_file
    from gosling.context_mgmt.trim_plan import TrimClock

    forced = _ForcedTrim(at)
    with mock.patch.object(TrimClock, "due", lambda clock, plan: forced(clock, plan)):
        [replay] = await replay_file(
            path, ("none", "hybrid"), options=ReplayOptions(context_limit=WINDOW)
        )
    calls = len(replay.results["none"].calls)
    return round(100 * (replay.relative_cost("hybrid") or 0.0), 1), forced.eligible, calls


def _cuts(lines: list[str]) -> list[int]:
    """Line counts that end a session just after a line of the model's."""
    return [i + 1 for i, line in enumerate(lines) if json.loads(line).get("type") == "assistant"]


async def _measure() -> dict[str, Any]:
    from bench.bench_replay import corpus_dir

    lines = (corpus_dir() / TRANSCRIPT).read_text(encoding="utf-8").splitlines()
    by_length: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cut_file = Path(tmp) / TRANSCRIPT
        for end in _cuts(lines):
            cut_file.write_text("\n".join(lines[:end]) + "\n", encoding="utf-8")
            cost, eligible, calls = await _relative_cost(cut_file, 1)
            if eligible:
                by_length[str(calls)] = cost
    whole = corpus_dir() / TRANSCRIPT
    best, best_at, at = 100.0, 0, 1
    while True:
        cost, eligible, _ = await _relative_cost(whole, at)
        if eligible < at:
            break
        if cost < best:
            best, best_at = cost, at
        at += 1
    pays_from = next((int(n) for n, cost in by_length.items() if cost < 100.0), None)
    return {
        "transcript": TRANSCRIPT,
        "earliest_trim_cost_vs_none_by_session_length": by_length,
        "earliest_trim_pays_from_call": pays_from,
        "best_single_trim_cost_vs_none": best,
        "best_single_trim_at_eligible_call": best_at,
    }


def run() -> dict[str, Any]:
    return asyncio.run(_measure())


def table_rows(result: dict[str, Any]) -> list[tuple[str, str]]:
    lengths = result["earliest_trim_cost_vs_none_by_session_length"]
    shown = ", ".join(f"{n}: {cost}%" for n, cost in lengths.items() if int(n) % 3 == 0)
    return [
        ("earliest trim, cost vs none by session length (calls)", shown),
        ("earliest trim pays from call", str(result["earliest_trim_pays_from_call"])),
        (
            "best single trim (hindsight)",
            f"{result['best_single_trim_cost_vs_none']}% at eligible call "
            f"{result['best_single_trim_at_eligible_call']}",
        ),
    ]
