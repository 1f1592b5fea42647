"""The trade-off of trimming old tool output: what it costs against what it hides.

For each setting of the context policy (`trim_patience`, `mask_keep_tokens`,
`mask_keep_last`), two figures side by side:

- cost: the scripted shell loop of `bench.cost_loop` (8 KB per step, 200k window) at 120 and
  300 steps, run through a real `gosling run` with the row's settings and priced from the
  wire (`bench.wire_loop`) with Anthropic's prompt cache, as a share of Codex's policy on the
  same loop; and the corpus transcripts' `hybrid` cost as a share of `none`'s;
- what was hidden: how many of the corpus's later uses (`context_mgmt.later_use`) found their
  tool output hidden from the view of the call that used it.

The defaults are the row marked `default`. Slow (about 20 s a row on 2 cores): run it on its own,
`python -m bench tradeoff`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from bench.bench_replay import WINDOW as CORPUS_WINDOW

ROWS: tuple[tuple[float, int, int], ...] = (
    # (trim_patience, mask_keep_tokens, mask_keep_last)
    (0.0, 4_000, 10),
    (1.0, 4_000, 10),
    (2.0, 4_000, 10),
    (4.0, 4_000, 10),
    (2.0, 2_000, 10),
    (2.0, 8_000, 10),
    (2.0, 16_000, 10),
    (2.0, 4_000, 5),
    (2.0, 4_000, 20),
)
STEPS = (120, 300)


def _loop_cost(steps: int, settings: dict[str, Any]) -> float:
    """gosling's cost on the loop over Codex's, both from a real run's wire (`bench.wire_loop`)
    with `settings` given to `gosling run` as `GOSLING_*` variables."""
    from bench.cost_loop import codex_requests, policy_figures
    from bench.wire_loop import run_loop
    from bench.wire_requests import WireSegmenter
    from gosling.context_mgmt.tokens import default_counter
    from gosling.providers.prompt_cache import prompt_cache_for

    env = {f"GOSLING_{name.upper()}": str(value) for name, value in settings.items()}
    run = run_loop(steps, "anthropic", env=env)
    cache = prompt_cache_for(run.model)
    gosling = policy_figures(run.requests, cache)
    codex, _ = codex_requests(
        run.history, WireSegmenter(run.history.api, default_counter().count_text)
    )
    return round(float(gosling["cost"]) / float(policy_figures(codex, cache)["cost"]), 3)


async def _corpus(patience: float, keep_tokens: int, keep_last: int) -> dict[str, Any]:
    from bench.bench_replay import corpus_dir
    from gosling.agent.replay.results import ReplayOptions
    from gosling.agent.replay.run import replay_file

    options = ReplayOptions(
        context_limit=CORPUS_WINDOW,
        keep_last=keep_last,
        keep_tokens=keep_tokens,
        patience=patience,
    )
    hidden = uses = 0
    hybrid = none = 0.0
    worst = 0.0
    for path in sorted(p for p in corpus_dir().iterdir() if p.is_file() and p.suffix != ".md"):
        for replay in await replay_file(path, ("none", "hybrid"), options=options):
            result = replay.results["hybrid"]
            hidden += result.hidden_then_used
            uses += result.later_uses
            hybrid += result.cost
            none += replay.results["none"].cost
            worst = max(worst, replay.relative_cost("hybrid") or 0.0)
    return {
        "hidden_then_used": hidden,
        "later_uses": uses,
        "corpus_cost_vs_none": round(hybrid / none, 3) if none else None,
        "corpus_worst_vs_none": round(worst, 3),
    }


def run() -> dict[str, Any]:
    from gosling.agent.config import Settings

    defaults = Settings()
    rows = []
    for patience, keep_tokens, keep_last in ROWS:
        settings = {
            "trim_patience": patience,
            "mask_keep_tokens": keep_tokens,
            "mask_keep_last": keep_last,
        }
        row: dict[str, Any] = dict(settings)
        row["default"] = (patience, keep_tokens, keep_last) == (
            defaults.trim_patience,
            defaults.mask_keep_tokens,
            defaults.mask_keep_last,
        )
        for steps in STEPS:
            row[f"loop_{steps}_cost_vs_codex"] = _loop_cost(steps, settings)
        row.update(asyncio.run(_corpus(patience, keep_tokens, keep_last)))
        rows.append(row)
    return {"rows": rows}


def table_rows(result: dict[str, Any]) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for row in result["rows"]:
        name = (
            f"patience {row['trim_patience']:g} keep {row['mask_keep_last']} calls / "
            f"{row['mask_keep_tokens']:,} tokens" + (" (default)" if row["default"] else "")
        )
        rows.append(
            (
                name,
                f"loop cost vs codex {row['loop_120_cost_vs_codex']} (120) "
                f"{row['loop_300_cost_vs_codex']} (300); corpus cost vs none "
                f"{row['corpus_cost_vs_none']} (worst {row['corpus_worst_vs_none']}); "
                f"hidden then used {row['hidden_then_used']} of {row['later_uses']}",
            )
        )
    return rows


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
