"""Per-session state stays with its session: one `Agent` that opens, resumes and switches
sessions treats each exactly as a fresh agent would (masking, the stored context size,
background tool-pair summaries)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from pathlib import Path

from gosling.agent.events import CompactionStarted, MessageAdded
from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse
from gosling.providers import ModelConfig, ScriptedProvider, ScriptedReply, ToolSpec, Usage
from gosling.providers.testing import Step
from gosling.sessions import SqliteSessionStore
from gosling.sessions.records import SessionChanges

from .loop_helpers import assert_valid_requests, make_agent, run_turn

SUMMARY = (
    '<analysis>ok</analysis>\n```json\n{"user_intent": ["read the files"], '
    '"current_work": "reading"}\n```'
)
PLACEHOLDER = "hidden to save context"


def _stored(
    store: SqliteSessionStore,
    workdir: Path,
    label: str,
    calls: int,
    *,
    context_tokens: int | None = None,
) -> str:
    """A stored session of `calls` tool calls `c0`, `c1`, ... (the same ids in every session,
    as some local models number them) with sizeable outputs naming `label`."""
    record = store.create(working_dir=workdir, name=label, provider="scripted", model="scripted")
    messages = [Message.user(f"Read the files for {label}.")]
    for n in range(calls):
        request = ToolRequest(
            id=f"c{n}", name="developer__shell", arguments={"command": f"cat f{n}"}
        )
        output = f"output of {label} #{n}\n" + "x" * 600
        messages.append(Message.assistant(f"Reading f{n}.", request))
        messages.append(
            Message.user(None, ToolResponse(id=f"c{n}", content=(TextContent(text=output),)))
        )
    messages.append(Message.assistant(f"Read everything for {label}."))
    store.commit(record.id, SessionChanges(append=tuple(messages), context_tokens=context_tokens))
    return record.id


def _placeholders(messages: Sequence[Message]) -> set[str]:
    return {r.id for m in messages for r in m.tool_responses if PLACEHOLDER in r.text()}


async def test_resuming_after_another_session_masks_what_a_fresh_agent_masks(
    tmp_path: Path,
) -> None:
    agent, provider, store = make_agent(tmp_path, ["done with A", "done with B"])
    assert store is not None
    first = _stored(store, agent.working_dir, "A", 30)
    second, twin = (_stored(store, agent.working_dir, label, 30) for label in ("B", "B2"))

    a = agent.resume_session(first)
    await run_turn(agent, a, "anything left?")
    a.release()
    b = agent.resume_session(second)  # the interactive /resume path
    await run_turn(agent, b, "anything left?")

    fresh, fresh_provider, _ = make_agent(tmp_path, ["done with B2"])
    fresh.store = store
    await run_turn(fresh, fresh.resume_session(twin), "anything left?")

    after_a = _placeholders(provider.requests[-1].messages)
    alone = _placeholders(fresh_provider.requests[0].messages)
    assert alone == {f"c{n}" for n in range(20)}  # keep 10, mask whole batches of 10
    assert after_a == alone
    assert_valid_requests(provider)


async def test_a_resumed_session_over_the_threshold_compacts_before_its_first_call(
    tmp_path: Path,
) -> None:
    agent, provider, store = make_agent(
        tmp_path, [SUMMARY, "Picking up from the summary."], context_limit=100_000
    )
    assert store is not None
    stored = _stored(store, agent.working_dir, "big", 3, context_tokens=81_010)

    session = agent.resume_session(stored)
    events, finished = await run_turn(agent, session, "go on")

    assert finished.final_text == "Picking up from the summary."
    started = [e for e in events if isinstance(e, CompactionStarted)]
    assert [e.trigger for e in started] == ["threshold"]
    assert started[0].tokens_before > 81_010  # the stored count plus the new message
    reply = next(
        i
        for i, e in enumerate(events)
        if isinstance(e, MessageAdded) and e.message.text == finished.final_text
    )
    assert events.index(started[0]) < reply
    summary_request, call = provider.requests
    assert summary_request.fast and not summary_request.streamed
    assert not any(m.tool_responses for m in call.messages)  # the model saw the summary
    provider.assert_complete()


class _NotingProvider(ScriptedProvider):
    """Replies from the script; answers tool-pair summary requests with a note naming the
    session whose output it summarized."""

    def __init__(self, steps: Sequence[Step]) -> None:
        super().__init__(steps, model_config=ModelConfig("scripted", context_limit=200_000))
        self.notes = 0

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> tuple[Message, Usage]:
        found = re.search(r"output of (\w+) #(\d+)", system)
        assert found is not None, system
        self.notes += 1
        note = f"Summary: read the file of session {found[1]} (#{found[2]})."
        return Message.assistant(note), Usage(input_tokens=50, output_tokens=10)


async def _summaries_finished() -> None:
    running = [t for t in asyncio.all_tasks() if t.get_name() == "gosling-tool-pair-summaries"]
    if running:
        await asyncio.wait(running)


async def test_a_pair_summary_made_for_one_session_never_lands_in_another(
    tmp_path: Path,
) -> None:
    recall = ScriptedReply.tool_call("context__recall", {"id": "c0"})
    provider = _NotingProvider(["done with A", recall, "done with B"])
    agent, _, store = make_agent(
        tmp_path, [], provider=provider, context_strategy="summarize", tool_call_cutoff=10
    )
    assert store is not None
    first = _stored(store, agent.working_dir, "A", 30)
    second = _stored(store, agent.working_dir, "B", 30)

    a = agent.resume_session(first)
    await run_turn(agent, a, "anything left?")  # schedules a batch of A's old calls
    a.release()
    b = agent.resume_session(second)
    await _summaries_finished()  # A's batch is ready before B's first call
    await run_turn(agent, b, "anything left?")  # a tool call, then summaries apply

    assert provider.notes >= 10
    sent_to_b = " ".join(m.text for r in provider.requests[1:] for m in r.messages)
    assert "session A" not in sent_to_b
    assert store.load_messages(second) == b.messages
    assert not any("session A" in m.text for m in b.messages)
    assert any("session B" in m.text for m in b.messages)  # B's own summaries still come
