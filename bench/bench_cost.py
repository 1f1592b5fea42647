"""What context policies cost once prompt caching is priced in (issue 16).

The scripted shell loop of `bench.cost_loop` (8 KB of output per step, 200k window) at 120
and 300 steps, under three policies: `none` (whole history), `codex` (whole history until
90% of the window, then compaction) and `gosling` (the requests the real reply loop sends
today). Each is priced by `providers.cache_cost` with the Anthropic cache (breakpoints where
gosling puts them; Sonnet's ratios) and the OpenAI cache (prefix in 128-token blocks; gpt-5's
ratios), in units of one new input token; `cost` adds the output tokens (replies and
summaries) at the family's output ratio, `input_cost` leaves them out.

Also: how many hidden-then-used pairs (`context_mgmt.later_use`) each corpus transcript has,
the denominator of the count a strategy will be judged by.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gosling.providers.prompt_cache import CacheFamily

STEPS = (120, 300)
FAMILIES: dict[CacheFamily, str] = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-5"}


def _loop(steps: int) -> dict[str, Any]:
    from bench.cost_loop import (
        codex_requests,
        gosling_sent,
        none_requests,
        policy_figures,
        recorded_requests,
        scripted_loop,
    )
    from gosling.context_mgmt.request_segments import RequestSegmenter
    from gosling.context_mgmt.tokens import TokenCounter
    from gosling.providers.prompt_cache import prompt_cache_for

    counter = TokenCounter()
    conversation = scripted_loop(steps)
    outputs = [counter.count_message(m) for m in conversation if m.tool_responses]
    result: dict[str, Any] = {"mean_output_tokens": round(sum(outputs) / len(outputs))}
    for family, model in FAMILIES.items():
        cache = prompt_cache_for(model)
        sent = gosling_sent(steps, family)
        system, tools = sent[0].system, sent[0].tools
        segmenter = RequestSegmenter(counter, cache.mechanism)
        gosling = recorded_requests(sent, conversation, segmenter)
        codex, compactions = codex_requests(conversation, segmenter, system, tools)
        figures = {
            "none": policy_figures(none_requests(conversation, segmenter, system, tools), cache),
            "codex": policy_figures(codex, cache),
            "gosling": policy_figures(gosling, cache),
        }
        figures["codex"]["compactions"] = compactions
        for name in ("none", "gosling"):
            figures[name]["cost_vs_codex"] = round(
                figures[name]["cost"] / figures["codex"]["cost"], 3
            )
            figures[name]["input_cost_vs_codex"] = round(
                figures[name]["input_cost"] / figures["codex"]["input_cost"], 3
            )
            figures[name]["tokens_vs_codex"] = round(
                figures[name]["tokens_sent"] / figures["codex"]["tokens_sent"], 3
            )
        result[family] = figures
    return result


def _corpus_later_uses() -> dict[str, Any]:
    from bench.bench_replay import corpus_dir, short_name
    from gosling.context_mgmt.later_use import find_later_uses
    from gosling.sessions import ImportFailed
    from gosling.sessions.importers import load_transcripts

    directory = corpus_dir()
    if not directory.is_dir():
        return {"skipped": f"no corpus directory at {directory}"}
    found: dict[str, Any] = {}
    for path in sorted(p for p in directory.iterdir() if p.is_file() and p.suffix != ".md"):
        try:
            transcripts = load_transcripts(path)
        except ImportFailed as exc:
            found[path.name] = {"error": str(exc)}
            continue
        for run, transcript in enumerate(transcripts, start=1):
            name = short_name(f"{path.name}#{run}" if len(transcripts) > 1 else path.name)
            uses = find_later_uses(transcript.messages, transcript.system_prompt)
            found[name] = {
                "uses": len({(u.tool_call_id, u.message_index) for u in uses}),
                "tokens": len(uses),
            }
    return found


def run() -> dict[str, Any]:
    result: dict[str, Any] = {f"steps_{n}": _loop(n) for n in STEPS}
    first, last = (result[f"steps_{n}"] for n in STEPS)
    result["gosling_last_request_300_over_120"] = {
        family: round(
            last[family]["gosling"]["last_request"] / first[family]["gosling"]["last_request"], 3
        )
        for family in FAMILIES
    }
    result["gosling_late_peak_300_over_120"] = {
        family: round(
            last[family]["gosling"]["late_peak_request"]
            / first[family]["gosling"]["late_peak_request"],
            3,
        )
        for family in FAMILIES
    }
    result["corpus_later_uses"] = _corpus_later_uses()
    return result


def table_rows(result: dict[str, Any]) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for n in STEPS:
        loop = result[f"steps_{n}"]
        for family in FAMILIES:
            for name, figures in loop[family].items():
                line = (
                    f"cost {figures['cost']:>11,}  tokens {figures['tokens_sent']:>11,}  "
                    f"cached {figures['cached_share']:.0%}  "
                    f"last request {figures['last_request']:,}"
                )
                if "cost_vs_codex" in figures:
                    line += (
                        f"  ({figures['cost_vs_codex']}x codex cost, "
                        f"{figures['tokens_vs_codex']}x tokens)"
                    )
                rows.append((f"steps_{n}.{family}.{name}", line))
    for key in ("gosling_last_request_300_over_120", "gosling_late_peak_300_over_120"):
        for family, ratio in result[key].items():
            rows.append((f"{key}.{family}", str(ratio)))
    return rows


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
