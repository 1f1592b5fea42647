"""Property: whatever a session goes through, the view the loop sends is valid, nothing stored
is lost or changed, and every tool output can still be recalled.

The session grows the way the reply loop grows it (tool calls with parallel batches, errors,
hint messages, finished turns, turns stopped right after tool results), and before each model
call the session's own `ContextPipeline` runs exactly as the loop runs it (`before_call`:
masking, tool-pair summaries, compaction at the threshold), under a strategy, window and
knobs drawn per example; `/compact` runs at random points, and an overflow compaction too.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from gosling.agent.agent import Agent
from gosling.agent.config import Settings
from gosling.agent.events import CompactionRefused
from gosling.agent.session import AgentSession
from gosling.context_mgmt.errors import CompactionFailed
from gosling.context_mgmt.recall import recall
from gosling.context_mgmt.tool_pairs import TOOL_SUMMARY_KIND
from gosling.conversation import Message
from gosling.providers import ContextLengthExceeded, ModelConfig, ScriptedProvider, ToolSpec, Usage
from tests.context_mgmt.tool_conversations import answers, asks, call, output, view_issues, visible

Op = Literal["tools", "hint", "answer", "stop", "compact", "overflow"]
WEIGHTS: dict[Op, int] = {
    "tools": 8,
    "hint": 1,
    "answer": 1,
    "stop": 1,
    "compact": 1,
    "overflow": 1,
}
OPS: list[Op] = [op for op, weight in WEIGHTS.items() for _ in range(weight)]

steps = st.lists(
    st.tuples(st.sampled_from(OPS), st.integers(0, 3), st.integers(0, 2**16)),
    min_size=8,
    max_size=40,
)
knobs = st.fixed_dictionaries(
    {
        "context_strategy": st.sampled_from(["summarize", "mask", "hybrid"]),
        "mask_keep_last": st.integers(0, 3),
        "mask_keep_tokens": st.sampled_from([0, 300, 4_000]),
        "trim_patience": st.sampled_from([0.0, 1.0, 2.0]),
        "prompt_cache": st.sampled_from([None, "anthropic", "openai"]),
        "tool_call_cutoff": st.integers(1, 4),
    }
)
windows = st.sampled_from([3_000, 200_000])


class _Summarizer(ScriptedProvider):
    """Answers every summary request (compaction or tool pair) at once."""

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> tuple[Message, Usage]:
        return Message.assistant("Summary: the build was being fixed."), Usage(input_tokens=9)


class Run:
    """A session grown like the reply loop grows one, with the outputs it produced."""

    def __init__(self, session: AgentSession) -> None:
        self.session = session
        self.session.append(Message.user("Please fix the build."))
        self.outputs: dict[str, str] = {}
        self.calls = 0
        self.turn_calls = 0

    @property
    def messages(self) -> list[Message]:
        return self.session.messages

    def last_is(self, *roles: str) -> bool:
        view = visible(self.messages)
        return bool(view) and view[-1].effective_role in roles

    def ends_with_note(self) -> bool:
        view = visible(self.messages)
        return bool(view) and view[-1].metadata.kind == TOOL_SUMMARY_KIND

    def tools(self, parallel: int, seed: int) -> None:
        ids = [f"c{self.calls + k}" for k in range(parallel + 1)]
        self.calls += len(ids)
        self.turn_calls += len(ids)
        rng = random.Random(seed)
        responses = []
        for tool_id in ids:
            text = f"{tool_id}: " + "out " * rng.choice([2, 200])
            self.outputs[tool_id] = text
            responses.append(output(tool_id, text, is_error=rng.random() < 0.2))
        note = "Working on it." if seed % 2 else None
        self.session.append(asks(*(call(i) for i in ids), text=note), answers(*responses))

    async def step(self, op: Op, a: int, seed: int) -> None:
        pipeline = self.session.pipeline
        if op == "tools":
            self.tools(a, seed)
        elif op == "hint" and self.last_is("tool"):
            hint = Message.user(f"<hints seed={seed}>").agent_only().with_kind("hints")
            self.session.append(hint)
        elif op == "answer":
            self.session.append(Message.assistant("Done."), Message.user(f"Next task {seed}."))
            self.turn_calls = 0
        elif op == "stop" and (self.last_is("tool") or self.ends_with_note()):
            # A turn cancelled after its tool results (or after the note added before the
            # model call that never finished).
            self.session.append(Message.user(f"Stop, do {seed} instead."))
            self.turn_calls = 0
        elif op == "compact":
            # `/compact` between turns; the user's next message completes the view.
            events = [e async for e in pipeline.compact(self.session, trigger="manual")]
            if not any(isinstance(e, CompactionRefused) for e in events):
                # A refused summary (larger than the history) changed nothing to complete.
                self.session.append(Message.user(f"Go on with {seed}."))
                self.turn_calls = 0
        elif op == "overflow" and pipeline.compacts_on_overflow:
            overflow = ContextLengthExceeded("too long")
            try:
                _ = [e async for e in pipeline.overflowed(self.session, overflow)]
            except CompactionFailed as failure:
                # Only a summary larger than the tiny history it would replace; the turn
                # ends with that error and the history stays as it was.
                assert failure.reason == "summary_too_large"
            pipeline.overflow_compactions = 0  # the retried call succeeded
        if op in ("tools", "hint", "answer", "stop"):
            # Right before the model call, as the loop does it.
            async for trimmed in pipeline.before_call(self.session, self.turn_calls):
                event(type(trimmed).__name__)
            if pipeline.pairs is not None:
                await pipeline.pairs.collect()  # the batch is ready by the next call


async def _scenario(plan: list[tuple[Op, int, int]], config: Settings, window: int) -> None:
    provider = _Summarizer(model_config=ModelConfig("m", context_limit=window))
    agent = Agent(provider, config=config, working_dir=Path.cwd())
    run = Run(agent.open_session())
    try:
        for op, a, seed in plan:
            before = list(run.messages)
            await run.step(op, a, seed)
            after = run.messages

            assert view_issues(after) == [], (op, [m.effective_role for m in visible(after)])
            assert [m.id for m in after[: len(before)]] == [m.id for m in before]
            assert [m.content for m in after[: len(before)]] == [m.content for m in before]
            notes = [m for m in visible(after) if m.metadata.kind == TOOL_SUMMARY_KIND]
            assert len(notes) <= 1
        for tool_id, text in run.outputs.items():
            found = recall(run.messages, tool_id, max_chars=None)
            assert found.found and text in found.text
    finally:
        await run.session.close()


@settings(max_examples=60, deadline=None)
@given(steps, knobs, windows)
@example(  # a note added before a stopped turn, then the user's next message: park it
    plan=[
        ("tools", 1, 0),
        ("tools", 3, 0),
        ("tools", 3, 0),
        ("tools", 1, 1),
        ("answer", 0, 0),
        ("tools", 0, 0),
        ("stop", 0, 0),
        ("tools", 0, 0),
    ],
    config={"context_strategy": "summarize", "mask_keep_last": 0, "tool_call_cutoff": 1},
    window=3_000,
)
@example(  # a folding note added before a stopped turn, then the user's next message
    plan=[
        ("tools", 2, 0),
        ("tools", 2, 0),
        ("tools", 2, 0),
        ("tools", 2, 0),
        ("stop", 0, 0),
        ("tools", 1, 0),
        ("tools", 2, 0),
    ],
    config={"context_strategy": "mask", "mask_keep_last": 0, "tool_call_cutoff": 1},
    window=200_000,
)
def test_any_session_through_the_pipeline_keeps_the_request_valid_and_loses_nothing(
    plan: list[tuple[Op, int, int]], config: dict[str, object], window: int
) -> None:
    asyncio.run(_scenario(plan, Settings.model_validate(config), window))
