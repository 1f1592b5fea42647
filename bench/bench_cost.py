"""What context policies cost once prompt caching is priced in (issue 16), from the wire
(issue 30).

The scripted shell loop of `bench.cost_loop` (8 KB of output per step, 200k window) at 120
and 300 steps, run through a real `gosling run` against the loopback fake server for each
family (`bench.wire_loop`: Anthropic with claude-sonnet-4-5, OpenAI Chat with gpt-5; the
server reports the usage a provider would), under three policies: `gosling` (the requests
the run sent), `none` (whole history) and `codex` (whole history until 90% of the window,
then compaction), the last two built from the same wire messages. Each is priced by
`providers.cache_cost` with the Anthropic cache (breakpoints where gosling puts them;
Sonnet's ratios) and the OpenAI cache (prefix in 128-token blocks; gpt-5's ratios), in units
of one new input token; `cost` adds the output tokens (replies and summaries) at the
family's output ratio, `input_cost` leaves them out. Tokens are o200k tokens of the texts in
the bodies. `wire` states what the wire carried beside what was priced for `gosling`
(`priced_over_wire` must be 1.0).

Also: how many hidden-then-used pairs (`context_mgmt.later_use`) each corpus transcript has,
the denominator of the count a strategy will be judged by.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gosling.providers.prompt_cache import CacheFamily

STEPS = (120, 300)
FAMILIES: tuple[CacheFamily, ...] = ("anthropic", "openai")


def _loop(steps: int) -> dict[str, Any]:
    from bench.cost_loop import codex_requests, none_requests, policy_figures, result_tokens
    from bench.wire_loop import run_loop, wire_check
    from bench.wire_requests import WireSegmenter
    from gosling.context_mgmt.tokens import default_counter
    from gosling.providers.prompt_cache import prompt_cache_for

    count = default_counter().count_text
    result: dict[str, Any] = {}
    for family in FAMILIES:
        run = run_loop(steps, family)
        cache = prompt_cache_for(run.model)
        segmenter = WireSegmenter(run.history.api, count)
        outputs = result_tokens(run.history, segmenter)
        mean_output = round(sum(outputs) / max(len(outputs), 1))
        result.setdefault("mean_output_tokens", mean_output)  # the first family's
        codex, compactions = codex_requests(run.history, segmenter)
        figures = {
            "none": policy_figures(none_requests(run.history, segmenter), cache),
            "codex": policy_figures(codex, cache),
            "gosling": policy_figures(run.requests, cache),
        }
        figures["codex"]["compactions"] = compactions
        for name in ("none", "gosling"):
            figures[name].update(_versus_codex(figures[name], figures["codex"]))
        figures["wire"] = {**wire_check(run), "mean_result_tokens": mean_output}
        result[family] = figures
    return result


def _versus_codex(figures: dict[str, Any], codex: dict[str, Any]) -> dict[str, float]:
    return {
        "cost_vs_codex": round(figures["cost"] / codex["cost"], 3),
        "input_cost_vs_codex": round(figures["input_cost"] / codex["input_cost"], 3),
        "tokens_vs_codex": round(figures["tokens_sent"] / codex["tokens_sent"], 3),
    }


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
                if name == "wire":
                    rows.append((f"steps_{n}.{family}.wire", _wire_line(figures)))
                    continue
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


def _wire_line(check: dict[str, Any]) -> str:
    return (
        f"wire {check['wire_text_tokens']:,} text tokens in {check['requests']} requests, "
        f"priced {check['priced_tokens']:,} in {check['requests_priced']} "
        f"(x{check['priced_over_wire']:.3f}), reported {check['reported_input_tokens']:,}"
    )


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
