"""What hooks and tracing cost a turn, through `Agent.reply` itself.

One turn of `CALLS` model calls, each calling `developer__todo_read` (a tool that does no
I/O, so the figures are gosling's own), against a `ScriptedProvider` whose replies are
instant, no session store:

- `plain_turn_ms`: no hooks, tracing off (the default path; compare it with the same
  function on `main`: `python -m bench.bench_hooks --plain-only` from a checkout of it, or
  see bench/README.md for the figures measured before and after);
- `one_pre_tool_use_ms`: the same turn with one PreToolUse hook (`cat > /dev/null`, which
  reads its payload: a real process per call), and what it adds per tool call;
- `traced_turn_ms`: tracing on, spans exported by a batch processor to an exporter that
  drops them (the SDK's own cost, no network).

Medians of `REPEATS` turns after one warm-up turn.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CALLS = 20
REPEATS = 7


def _steps(turns: int) -> list[Any]:
    from gosling.providers import ScriptedReply, Usage

    usage = Usage(input_tokens=1_000, output_tokens=5)
    steps = []
    for _ in range(turns):
        steps += [ScriptedReply.tool_call("developer__todo_read", {}) for _ in range(CALLS - 1)]
        steps.append(ScriptedReply(text="Done.", usage=usage))
    return steps


def _agent(workdir: Path, turns: int, **extra: Any) -> Any:
    from gosling.agent.agent import Agent
    from gosling.agent.tools.developer import developer_extension
    from gosling.agent.tools.manager import ExtensionManager
    from gosling.context_mgmt.tokens import TokenCounter
    from gosling.providers import ModelConfig, ScriptedProvider

    provider = ScriptedProvider(
        _steps(turns), model_config=ModelConfig("bench", context_limit=200_000)
    )
    return Agent(
        provider,
        tools=ExtensionManager([developer_extension()]),
        session_store=None,
        working_dir=workdir,
        counter=TokenCounter(),
        **extra,
    )


async def _turns(agent: Any, turns: int) -> list[float]:
    session = agent.open_session()
    times = []
    for k in range(turns):
        start = time.perf_counter()
        async for _ in agent.reply(session, f"Step {k}: read the todo list."):
            pass
        times.append((time.perf_counter() - start) * 1000)
    await session.close()
    return times[1:]


def _median(agent: Any) -> float:
    return round(statistics.median(asyncio.run(_turns(agent, REPEATS + 1))), 2)


def plain_turn_ms(workdir: Path) -> float:
    return _median(_agent(workdir, REPEATS + 1))


def _hooked(workdir: Path) -> Any:
    from gosling.agent.hooks.config import ConfiguredHook, HookConfig

    hook = ConfiguredHook("PreToolUse", "", "cat > /dev/null", 60.0, "bench")
    return _agent(workdir, REPEATS + 1, hooks=HookConfig((hook,)))


def _traced(workdir: Path) -> Any:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    from gosling.agent.telemetry.settings import TraceSettings
    from gosling.agent.telemetry.spans import Tracing

    class Dropped(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    config = TraceSettings("http://127.0.0.1:9", "http/protobuf", False)
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropped()))
    tracing = Tracing.__new__(Tracing)
    tracing.config, tracing.links = config, []
    tracing.tracer = provider.get_tracer("gosling")
    return _agent(workdir, REPEATS + 1, tracing=tracing)


def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        plain = plain_turn_ms(workdir)
        hooked = _median(_hooked(workdir))
        traced = _median(_traced(workdir))
    return {
        "calls_per_turn": CALLS,
        "plain_turn_ms": plain,
        "one_pre_tool_use_ms": hooked,
        "pre_tool_use_per_call_ms": round((hooked - plain) / (CALLS - 1), 2),
        "traced_turn_ms": traced,
        "traced_per_model_call_us": round((traced - plain) / CALLS * 1000, 1),
    }


if __name__ == "__main__":
    if sys.argv[1:] == ["--plain-only"]:
        with tempfile.TemporaryDirectory() as tmp:
            print({"plain_turn_ms": plain_turn_ms(Path(tmp))})
    else:
        print(run())
