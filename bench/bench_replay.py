"""Replay of every transcript in a corpus under each context strategy at a 128k window.

The corpus is `GOSLING_BENCH_CORPUS` (`python -m bench --corpus DIR` sets it), else
`corpus/transcripts` in the repository. Every run of every file is replayed by
`agent.replay.run` (the real reply loop, with a recorded model and recorded tools) and the
deterministic stub summarizer, so the figures are exact and repeat from run to run. Per
transcript and in total: tokens sent relative to `none`, peak
context, compactions, tool pairs summarized, the input tokens of the summarizer's own calls
(a cost `tokens_sent` leaves out), whether every agent view was valid, and what each
strategy costs with Anthropic's prompt cache (`cost`, in new input tokens, and the share
read from the cache) beside how often it hid a tool output that a later reply used
(`hidden_then_used` of `later_uses`, `context_mgmt.later_use`): the trade-off of issue 16.

Targets (issue 11): `hybrid` sends at most 40% of what `none` sends and at most 70% of what
`summarize` sends, with every view valid.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

CORPUS_ENV = "GOSLING_BENCH_CORPUS"
DEFAULT_CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "transcripts"
WINDOW = 128_000
TARGET_HYBRID_VS_NONE = 0.40
TARGET_HYBRID_VS_SUMMARIZE = 0.70
_SUFFIXES = (".traj.json", ".jsonl", ".json")


def corpus_dir() -> Path:
    return Path(os.environ.get(CORPUS_ENV) or DEFAULT_CORPUS)


def short_name(name: str) -> str:
    """`minisweagent_django-13964_deepseek-chat.traj.json#2` -> `...deepseek-chat#2`."""
    stem, _, run = name.partition("#")
    for suffix in _SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    return f"{stem}#{run}" if run else stem


async def _replay_all(files: list[Path]) -> tuple[list[Any], dict[str, str]]:
    from gosling.agent.replay.results import ReplayOptions
    from gosling.agent.replay.run import ReplayError, replay_file
    from gosling.sessions import ImportFailed

    replays: list[Any] = []
    errors: dict[str, str] = {}
    for path in files:
        try:
            replays.extend(await replay_file(path, options=ReplayOptions(context_limit=WINDOW)))
        except (ImportFailed, ReplayError) as exc:
            errors[path.name] = str(exc)
    return replays, errors


def run() -> dict[str, Any]:
    from gosling.agent.replay.results import REPLAY_STRATEGIES

    directory = corpus_dir()
    if not directory.is_dir():
        return {"corpus": str(directory), "skipped": f"no corpus directory at {directory}"}
    files = sorted(p for p in directory.iterdir() if p.is_file() and p.suffix != ".md")
    start = time.perf_counter()
    replays, errors = asyncio.run(_replay_all(files))
    seconds = time.perf_counter() - start

    transcripts: dict[str, Any] = {}
    totals = dict.fromkeys(REPLAY_STRATEGIES, 0)
    side = dict.fromkeys(REPLAY_STRATEGIES, 0)
    valid = dict.fromkeys(REPLAY_STRATEGIES, True)
    costs = dict.fromkeys(REPLAY_STRATEGIES, 0.0)
    hidden = dict.fromkeys(REPLAY_STRATEGIES, 0)
    for replay in replays:
        row: dict[str, Any] = {"model_calls": replay.model_calls}
        for name, result in replay.results.items():
            relative = replay.relative(name)
            cost = replay.relative_cost(name)
            row[name] = {
                "tokens_sent": result.tokens_sent,
                "relative_to_none": None if relative is None else round(relative, 3),
                "peak_context": result.peak_context,
                "compactions": result.compactions,
                "pair_summaries": result.pair_summaries,
                "tokens_masked": result.tokens_masked,
                "summarizer_input_tokens": result.side_input_tokens,
                "valid": result.all_valid,
                "cost": round(result.cost),
                "cost_relative_to_none": None if cost is None else round(cost, 3),
                "cached_share": round(result.cached_share, 3),
                "hidden_then_used": result.hidden_then_used,
                "later_uses": result.later_uses,
            }
            costs[name] += result.cost
            hidden[name] += result.hidden_then_used
            totals[name] += result.tokens_sent
            side[name] += result.side_input_tokens
            valid[name] = valid[name] and result.all_valid
        transcripts[short_name(replay.name)] = row

    none = totals["none"] or 1
    hybrid_vs_none = totals["hybrid"] / none
    hybrid_vs_summarize = totals["hybrid"] / (totals["summarize"] or 1)
    return {
        "corpus": str(directory),
        "window": WINDOW,
        "summarizer": "stub",
        "seconds": round(seconds, 1),
        "transcripts": transcripts,
        "totals": {
            name: {
                "tokens_sent": totals[name],
                "relative_to_none": round(totals[name] / none, 3),
                "summarizer_input_tokens": side[name],
                "all_valid": valid[name],
                "cost": round(costs[name]),
                "cost_relative_to_none": round(costs[name] / (costs["none"] or 1), 3),
                "hidden_then_used": hidden[name],
            }
            for name in REPLAY_STRATEGIES
        },
        "errors": errors,
        "targets": {
            "hybrid_vs_none": round(hybrid_vs_none, 3),
            "hybrid_vs_none_max": TARGET_HYBRID_VS_NONE,
            "hybrid_vs_summarize": round(hybrid_vs_summarize, 3),
            "hybrid_vs_summarize_max": TARGET_HYBRID_VS_SUMMARIZE,
            "all_views_valid": all(valid.values()),
            "met": hybrid_vs_none <= TARGET_HYBRID_VS_NONE
            and hybrid_vs_summarize <= TARGET_HYBRID_VS_SUMMARIZE
            and all(valid.values()),
        },
    }


def table_rows(result: dict[str, Any]) -> list[tuple[str, str]]:
    """One line per transcript for `python -m bench`: tokens sent relative to `none`."""
    if "skipped" in result:
        return [("skipped", str(result["skipped"]))]
    rows: list[tuple[str, str]] = []

    def cells(row: dict[str, Any], key: str) -> str:
        return "  ".join(f"{name} {row[name][key]:.1%}" for name in ("summarize", "mask", "hybrid"))

    def cost_cells(row: dict[str, Any]) -> str:
        """Cost relative to `none` and hidden-then-used, per strategy."""
        return "  ".join(
            f"{name} {row[name]['cost_relative_to_none'] or 0:.1%} "
            f"hid {row[name]['hidden_then_used']}"
            for name in ("none", "summarize", "mask", "hybrid")
        )

    for name, row in result["transcripts"].items():
        flags = "valid" if all(row[s]["valid"] for s in row if s != "model_calls") else "INVALID"
        peak = row["hybrid"]["peak_context"] / 1000
        rows.append((name, f"{cells(row, 'relative_to_none')}  (hybrid peak {peak:.1f}k, {flags})"))
        rows.append((f"{name} cost", cost_cells(row)))
    totals = result["totals"]
    rows.append(
        ("total", cells(totals, "relative_to_none") + f"  none {totals['none']['tokens_sent']:,}")
    )
    rows.append(("total cost", cost_cells(totals)))
    targets = result["targets"]
    rows.append(
        (
            "targets",
            f"hybrid/none {targets['hybrid_vs_none']:.1%} (<= 40%), hybrid/summarize "
            f"{targets['hybrid_vs_summarize']:.1%} (<= 70%), views valid "
            f"{targets['all_views_valid']}: {'met' if targets['met'] else 'missed'}",
        )
    )
    rows.extend((f"error {name}", message) for name, message in result["errors"].items())
    return rows


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
