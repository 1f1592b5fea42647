"""Context pipeline overhead per turn of the real reply loop, at 100, 1,000 and 10,000 messages.

`Agent.reply` runs one text-only turn against a `ScriptedProvider` whose reply is instant
(microseconds), with no session store, the developer and context tools, the default
`hybrid` strategy and a window large enough that nothing compacts. What is left is gosling's
own work per turn: system prompt and hints, masking decisions, the threshold check, the agent
view (kept incrementally), token counting and the per-turn context.

- `first_turn_ms`: the first turn on a loaded session (the view is built and counted from
  scratch, and the first masking batch applies);
- `turn_ms`: the median of the following turns (incremental: only new messages are checked
  and counted);
- `recount_ms`: what one turn would cost without the incremental view: `fix_agent_view` plus
  `TokenCounter().count_chat` over the same messages with empty caches;
- `parts_us`: the stages of a warm turn timed one by one, in microseconds. The loop counts
  only new messages (`count_new_message`); `count_whole_view_warm` is a full recount with
  warm caches, for comparison. `threshold_check` and `record_usage` are the session
  pipeline's `check` and the size update of `after_call`, run once per model call;
  `system_prompt_and_tools` is building the session's request prefix, which happens once per
  session (and again when the mode or the extensions change).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SIZES = (100, 1_000, 10_000)
WARM_TURNS = 7
RECOUNTS = 3
PART_REPEATS = 20
WINDOW = 50_000_000
"""Large enough that no session here reaches the compaction threshold."""


def _session_messages(n: int) -> list[Any]:
    from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse

    messages = [Message.user("Refactor the storage layer and keep the tests green.")]
    i = 0
    while len(messages) < n:
        call = ToolRequest(
            id=f"c{i}", name="developer__shell", arguments={"command": f"rg -n item_{i} src/"}
        )
        output = "\n".join(
            f"src/module_{j}.py:{j * 7}: item_{i} = compute({j}, {i})" for j in range(12)
        )
        messages.append(Message.assistant(f"Looking for item {i}.", call))
        messages.append(
            Message.user(None, ToolResponse(id=f"c{i}", content=(TextContent(text=output),)))
        )
        i += 1
    return messages[:n]


def _median_us(fn: Callable[[], object], repeat: int = PART_REPEATS) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return round(statistics.median(samples) * 1e6, 1)


async def _measure(n: int, workdir: Path) -> dict[str, Any]:
    from gosling.agent.agent import Agent
    from gosling.agent.tools.developer import developer_extension
    from gosling.agent.tools.manager import ExtensionManager
    from gosling.agent.tools.recall import context_extension
    from gosling.context_mgmt.tokens import TokenCounter
    from gosling.context_mgmt.turn_context import (
        TurnContext,
        format_turn_context,
        with_turn_context,
    )
    from gosling.conversation import Message, fix_agent_view
    from gosling.hints import load_hint_files
    from gosling.providers import ModelConfig, ScriptedProvider, ScriptedReply, Usage

    usage = Usage(input_tokens=1_000, output_tokens=5)
    steps = [ScriptedReply(text="Done.", usage=usage) for _ in range(WARM_TURNS + 1)]
    provider = ScriptedProvider(steps, model_config=ModelConfig("bench", context_limit=WINDOW))
    agent = Agent(
        provider,
        tools=ExtensionManager([developer_extension(), context_extension()]),
        session_store=None,
        working_dir=workdir,
        counter=TokenCounter(),
    )
    messages = _session_messages(n)
    session = agent.open_session(messages)

    async def turn(text: str) -> float:
        start = time.perf_counter()
        async for _ in agent.reply(session, text):
            pass
        return (time.perf_counter() - start) * 1000

    first = await turn("What is left to do?")
    warm = [await turn(f"And now step {k}?") for k in range(WARM_TURNS)]
    await session.close()
    provider.assert_complete()

    view = session.view.request_messages(session.messages)
    block_ctx = TurnContext(
        now=agent.clock(), working_dir=str(workdir), context_tokens=1_000, context_limit=WINDOW,
        threshold=0.8,
    )  # fmt: skip
    fresh = iter([Message.assistant(f"New reply number {k}.") for k in range(PART_REPEATS)])
    reply = view[-1]
    prefix = agent.request_prefix(session)
    pipeline = session.pipeline

    def rebuild_prefix() -> None:
        session.prefix = None
        agent.request_prefix(session)

    parts = {
        "hints": _median_us(lambda: load_hint_files(workdir, agent.config.context_file_names)),
        "system_prompt_and_tools": _median_us(rebuild_prefix),
        "threshold_check": _median_us(lambda: pipeline.check(view)),
        "record_usage": _median_us(lambda: pipeline.size.set(1_005, "reported", [*view, reply])),
        "agent_view": _median_us(lambda: session.view.request_messages(session.messages)),
        "count_new_message": _median_us(lambda: agent.counter.count_message(next(fresh))),
        "count_whole_view_warm": _median_us(
            lambda: agent.counter.count_chat(prefix.system_prompt, view, prefix.tool_specs)
        ),
        "turn_context": _median_us(lambda: with_turn_context(view, format_turn_context(block_ctx))),
    }

    recounts = []
    for _ in range(RECOUNTS):
        start = time.perf_counter()
        fixed, _ = fix_agent_view(session.messages)
        TokenCounter().count_chat(prefix.system_prompt, fixed, prefix.tool_specs)
        recounts.append((time.perf_counter() - start) * 1000)
    turn_ms = statistics.median(warm)
    recount_ms = statistics.median(recounts)
    return {
        "first_turn_ms": round(first, 2),
        "turn_ms": round(turn_ms, 3),
        "recount_ms": round(recount_ms, 2),
        "recount_over_turn": round(recount_ms / turn_ms, 1),
        "parts_us": parts,
    }


async def _all() -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp) / "project"
        (workdir / ".git").mkdir(parents=True)
        (workdir / "AGENTS.md").write_text("Run the tests with `pytest -q`.\n", encoding="utf-8")
        for n in SIZES:
            results[f"messages_{n}"] = await _measure(n, workdir.resolve())
    return results


def run() -> dict[str, Any]:
    return asyncio.run(_all())


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
