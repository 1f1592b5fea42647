"""Property: whatever mix of compaction, tool-pair summaries and masking runs on a growing
session, the request built from it is valid, nothing stored is lost or changed, and every
tool output can still be recalled.

The session grows the way the reply loop grows it (tool calls with parallel batches, errors,
hint messages, finished turns, turns stopped right after tool results), and before each model
call the loop applies pending summaries (`apply_tool_pair_summaries`), as documented in
`context_mgmt.pair_apply`.
"""

from __future__ import annotations

import asyncio
import random
from typing import Literal

from hypothesis import event, given, settings
from hypothesis import strategies as st

from context_mgmt.compact import compact_messages
from context_mgmt.masking import mark_masked, messages_to_mask
from context_mgmt.recall import recall
from context_mgmt.tokens import default_counter
from context_mgmt.tool_pairs import (
    TOOL_SUMMARY_KIND,
    apply_tool_pair_summaries,
    tool_ids_to_summarize,
)
from conversation import Message
from providers import ScriptedProvider
from tests.context_mgmt.tool_conversations import (
    answers,
    asks,
    call,
    notes_for,
    output,
    view_issues,
    visible,
    visible_tool_ids,
)

Op = Literal["tools", "hint", "answer", "stop", "compact", "summarize", "mask"]
WEIGHTS: dict[Op, int] = {
    "tools": 6,
    "hint": 1,
    "answer": 1,
    "stop": 1,
    "compact": 1,
    "summarize": 3,
    "mask": 2,
}
OPS: list[Op] = [op for op, weight in WEIGHTS.items() for _ in range(weight)]

steps = st.lists(
    st.tuples(st.sampled_from(OPS), st.integers(0, 3), st.integers(0, 3), st.integers(0, 2**16)),
    min_size=8,
    max_size=40,
)


class Session:
    """A session grown like the reply loop grows one, with the outputs it produced."""

    def __init__(self) -> None:
        self.messages: list[Message] = [Message.user("Please fix the build.")]
        self.outputs: dict[str, str] = {}
        self.calls = 0

    def last_is(self, *roles: str) -> bool:
        view = visible(self.messages)
        return bool(view) and view[-1].effective_role in roles

    def ends_with_note(self) -> bool:
        view = visible(self.messages)
        return bool(view) and view[-1].metadata.kind == TOOL_SUMMARY_KIND

    def tools(self, parallel: int, seed: int) -> None:
        ids = [f"c{self.calls + k}" for k in range(parallel + 1)]
        self.calls += len(ids)
        rng = random.Random(seed)
        responses = []
        for tool_id in ids:
            text = f"{tool_id}: " + "out " * rng.choice([2, 200])
            self.outputs[tool_id] = text
            responses.append(output(tool_id, text, is_error=rng.random() < 0.2))
        note = "Working on it." if seed % 2 else None
        self.messages += [asks(*(call(i) for i in ids), text=note), answers(*responses)]

    def step(self, op: Op, a: int, b: int, seed: int) -> None:
        if op == "tools":
            self.tools(a, seed)
        elif op == "hint" and self.last_is("tool"):
            hint = Message.user(f"<hints seed={seed}>").agent_only().with_kind("hints")
            self.messages.append(hint)
        elif op == "answer":
            self.messages += [Message.assistant("Done."), Message.user(f"Next task {seed}.")]
        elif op == "stop" and (self.last_is("tool") or self.ends_with_note()):
            # A turn cancelled after its tool results (or after the note added before the
            # model call that never finished).
            self.messages.append(Message.user(f"Stop, do {seed} instead."))
        elif op == "compact":
            provider = ScriptedProvider([f"Summary {seed}: the build was being fixed."])
            result = asyncio.run(
                compact_messages(provider, self.messages, counter=default_counter())
            )
            self.messages = list(result.messages)
        elif op == "summarize":
            ids = tool_ids_to_summarize(self.messages, cutoff=a, protect_last_n=b)
            pool = visible_tool_ids(self.messages)
            rng = random.Random(seed)
            ids += pool[: rng.randint(0, len(pool))]  # oldest first, like the real selection
            ids += rng.sample(pool, min(len(pool), a))  # and some anywhere
            self.messages, flipped = apply_tool_pair_summaries(self.messages, notes_for(ids))
            event(f"summaries hid {'some' if flipped else 'no'} messages")
        elif op == "mask":
            chosen = messages_to_mask(self.messages, keep_last=a, batch=b + 1)
            self.messages = mark_masked(self.messages, chosen)
        if op in ("tools", "hint", "answer", "stop"):
            # The loop applies pending summaries right before each model call.
            self.messages, flipped = apply_tool_pair_summaries(self.messages, {})
            if flipped:
                event("a stranded note was parked")


@settings(max_examples=100, deadline=None)
@given(steps)
def test_any_mix_of_steps_keeps_the_request_valid_and_loses_nothing(
    plan: list[tuple[Op, int, int, int]],
) -> None:
    state = Session()
    for op, a, b, seed in plan:
        before = list(state.messages)
        state.step(op, a, b, seed)
        after = state.messages

        assert view_issues(after) == [], (op, [m.effective_role for m in visible(after)])
        assert [m.id for m in after[: len(before)]] == [m.id for m in before]
        assert [m.content for m in after[: len(before)]] == [m.content for m in before]
        notes = [m for m in visible(after) if m.metadata.kind == TOOL_SUMMARY_KIND]
        assert len(notes) <= 1

    for tool_id, text in state.outputs.items():
        found = recall(state.messages, tool_id, max_chars=None)
        assert found.found and text in found.text
