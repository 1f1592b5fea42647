"""What one compaction call costs: the prefix form against the transcript form.

For the 300-step cost loop's session and each corpus transcript, the history is taken at the
point it first passes 80% of a 128k window (all of it when it never does), and one compaction
call is priced both ways under the Anthropic and OpenAI cost models
(`providers.cache_cost`), in units of one new input token, replies included:

- prefix: the request the session last sent (system prompt, tools, messages, turn-context
  block) primes the cache; the compaction call resends the same prefix with the compaction
  request in place of the turn-context block (`context_mgmt.prefix_form`);
- transcript: the history rendered into `compaction.md` as a new system prompt, one fixed
  user request (`context_mgmt.summarize`): nothing of it was sent before.

Both replies are priced at `SUMMARY_TOKENS` output tokens, the same for both forms, so in a
short history the reply is most of either call's cost. Target: prefix ≤ 0.25 × transcript;
reported for the sessions that reach 80% of the window, for the input alone, and for all.

python -m bench compaction
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.cost_loop import TOOL_NAME, scripted_loop

WINDOW = 128_000
AT = 0.8
SUMMARY_TOKENS = 2_000
LIMIT = 0.25
CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "transcripts"
TURN_CONTEXT = (
    "<turn-context>\ntime: 2026-12-02 08:00 UTC\nworking directory: /work\n"
    "context: ~102k/128k tokens used (80%)\n</turn-context>"
)


def _cut(system: str, messages: Sequence[Any], tools: Sequence[Any], counter: Any) -> list[Any]:
    """The history up to the first message that takes the request past AT × WINDOW (the
    moment the threshold check compacts), ending on an assistant message or tool results."""
    from gosling.conversation import Message

    budget = int(WINDOW * AT)
    used = counter.count_text(system) + counter.count_tools(tools)
    kept: list[Message] = []
    for message in messages:
        if not message.metadata.agent_visible:
            continue
        used += counter.count_message(message)
        kept.append(message)
        if used > budget and message.effective_role != "user":
            break
        if used > budget and message.tool_responses:
            break
    return kept


def price_compaction(
    system: str, tools: Sequence[Any], history: Sequence[Any], counter: Any
) -> dict[str, Any]:
    from gosling.context_mgmt.format import extract_file_history
    from gosling.context_mgmt.prefix_form import with_request
    from gosling.context_mgmt.request_segments import RequestSegmenter
    from gosling.context_mgmt.summarize import SUMMARY_REQUEST, render_compaction_prompt
    from gosling.context_mgmt.templates import DEFAULT_TEMPLATES
    from gosling.context_mgmt.turn_context import with_turn_context
    from gosling.conversation import Message
    from gosling.providers.cache_cost import CacheSimulator
    from gosling.providers.prompt_cache import ANTHROPIC_CACHE, OPENAI_CACHE

    reads, writes = extract_file_history(history)
    ask = DEFAULT_TEMPLATES.render_prefix(
        read_files="\n".join(reads),
        modified_files="\n".join(writes),
        focus="",
        instructions="",
        previous_summary="",
    )
    transcript_system = render_compaction_prompt(history, read_files=reads, modified_files=writes)
    result: dict[str, Any] = {"history_tokens": counter.count_chat(system, history, tools)}
    for family, cache in (("anthropic", ANTHROPIC_CACHE), ("openai", OPENAI_CACHE)):
        segmenter = RequestSegmenter(counter, cache.mechanism)
        simulator = CacheSimulator(cache)
        simulator.price(segmenter.request(system, with_turn_context(history, TURN_CONTEXT), tools))
        prefix = simulator.price(
            segmenter.request(
                system, with_request(history, ask), tools, output_tokens=SUMMARY_TOKENS
            )
        )
        fresh = CacheSimulator(cache)
        transcript = fresh.price(
            segmenter.request(
                transcript_system, [Message.user(SUMMARY_REQUEST)], output_tokens=SUMMARY_TOKENS
            )
        )
        result[family] = {
            "input_ratio": round(prefix.input_cost / transcript.input_cost, 3),
            "prefix_cost": round(prefix.cost),
            "prefix_cache_read": prefix.cache_read,
            "prefix_sent": prefix.sent,
            "transcript_cost": round(transcript.cost),
            "transcript_sent": transcript.sent,
            "ratio": round(prefix.cost / transcript.cost, 3),
        }
    return result


def _sessions(counter: Any) -> list[tuple[str, str, list[Any], list[Any]]]:
    from gosling.agent.replay.run import prepare_messages, stand_in_system_prompt
    from gosling.providers import ToolSpec
    from gosling.sessions.importers.dispatch import load_transcripts

    shell = ToolSpec(
        TOOL_NAME,
        "Run a shell command and report its exit code, stdout and stderr.",
        {"type": "object", "properties": {"command": {"type": "string"}}},
    )
    sessions = [("cost_loop_300", stand_in_system_prompt(), [shell], scripted_loop(300))]
    for path in sorted(p for p in CORPUS.iterdir() if p.is_file() and p.suffix != ".md"):
        transcript = load_transcripts(path)[0]
        prepared, _ = prepare_messages(transcript.messages)
        system = transcript.system_prompt or stand_in_system_prompt()
        sessions.append((path.name, system, [], prepared))
    return sessions


def run() -> dict[str, Any]:
    from gosling.context_mgmt.tokens import default_counter

    counter = default_counter()
    rows: dict[str, Any] = {}
    worst = worst_input = worst_at_80 = 0.0
    for name, system, tools, messages in _sessions(counter):
        history = _cut(system, messages, tools, counter)
        row = price_compaction(system, tools, history, counter)
        row["reaches_80_percent"] = row["history_tokens"] > WINDOW * AT
        rows[name] = row
        ratios = [row[f]["ratio"] for f in ("anthropic", "openai")]
        worst = max(worst, *ratios)
        worst_input = max(
            worst_input, row["anthropic"]["input_ratio"], row["openai"]["input_ratio"]
        )
        if row["reaches_80_percent"]:
            worst_at_80 = max(worst_at_80, *ratios)
    return {
        "window": WINDOW,
        "at": AT,
        "summary_tokens": SUMMARY_TOKENS,
        "sessions": rows,
        "worst_ratio": worst,
        "worst_ratio_at_80_percent": worst_at_80,
        "worst_input_ratio": worst_input,
        "limit": LIMIT,
        "passes_at_80_percent": worst_at_80 <= LIMIT,
        "passes_input_only": worst_input <= LIMIT,
        "passes_everywhere": worst <= LIMIT,
    }


def table_rows(result: dict[str, Any]) -> list[tuple[str, str]]:
    rows = []
    for name, row in result["sessions"].items():
        a, o = row["anthropic"], row["openai"]
        rows.append(
            (
                name,
                f"{row['history_tokens']:,} tok; prefix/transcript anthropic {a['ratio']:.3f} "
                f"(input {a['input_ratio']:.3f}), openai {o['ratio']:.3f} "
                f"(input {o['input_ratio']:.3f})",
            )
        )
    for key in ("worst_ratio_at_80_percent", "worst_input_ratio", "worst_ratio"):
        rows.append((key, f"{result[key]:.3f} (target {result['limit']})"))
    return rows


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
