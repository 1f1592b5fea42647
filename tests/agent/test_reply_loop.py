"""The reply loop end to end on a ScriptedProvider, with real tools and a real store."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

from gosling.agent.events import (
    CompactionFinished,
    CompactionStarted,
    ContextTrimmed,
    ErrorEvent,
    HintsLoaded,
    Notice,
    PermissionRequest,
    ToolCall,
    ToolResult,
)
from gosling.conversation import TURN_CONTEXT_KIND, Message, ToolRequest, fix_conversation
from gosling.providers import (
    Completed,
    ContextLengthExceeded,
    ScriptedProvider,
    ScriptedReply,
    ScriptedRequest,
    StreamEvent,
    Usage,
)
from gosling.providers.anthropic import to_wire_messages
from gosling.providers.testing import Step

from .loop_helpers import assert_valid_requests, make_agent, run_turn

SUMMARY = (
    '<analysis>ok</analysis>\n```json\n{"user_intent": ["make the file"], '
    '"current_work": "writing"}\n```'
)


def call(name: str, **arguments: object) -> ScriptedReply:
    return ScriptedReply.tool_call(name, dict(arguments))


async def test_text_reply_is_answered_and_stored(tmp_path: Path) -> None:
    agent, provider, store = make_agent(tmp_path, ["Hi there!"])
    session = agent.new_session("greeting")
    _, finished = await run_turn(agent, session, "hello")
    assert (finished.stop_reason, finished.final_text, finished.turns) == (
        "end_turn",
        "Hi there!",
        1,
    )
    assert store is not None and session.id is not None
    stored = store.load_messages(session.id)
    assert [(m.role, m.text) for m in stored] == [("user", "hello"), ("assistant", "Hi there!")]
    provider.assert_complete()


async def test_tool_loop_writes_and_runs(tmp_path: Path) -> None:
    steps: list[Step] = [
        call("developer__write", path="notes/a.txt", content="alpha\n"),
        call("developer__shell", command="cat notes/a.txt && echo done"),
        "All done.",
    ]
    agent, provider, store = make_agent(tmp_path, steps)
    session = agent.new_session()
    events, finished = await run_turn(agent, session, "write a note and print it")
    assert finished.final_text == "All done." and finished.turns == 3
    assert (tmp_path / "work" / "notes" / "a.txt").read_text() == "alpha\n"
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.name for r in results] == ["developer__write", "developer__shell"]
    assert "alpha" in results[1].output and not results[1].is_error
    third = provider.requests[2].messages
    assert third[-2].tool_responses and "alpha" in third[-2].tool_responses[0].text()
    assert_valid_requests(provider)
    assert store is not None and session.id is not None
    assert len(store.load_messages(session.id)) == 6


async def test_turn_context_trails_the_request_and_is_not_stored(tmp_path: Path) -> None:
    agent, provider, store = make_agent(tmp_path, [call("developer__shell", command="true"), "ok"])
    session = agent.new_session()
    await run_turn(agent, session, "go")
    for request in provider.requests:
        assert "<turn-context>" in request.messages[-1].text
        assert all("<turn-context>" not in m.text for m in request.messages[:-1])
    # after the user's text the block joins it; after tool results it is a message of its own
    first_last, second_last = (r.messages[-1] for r in provider.requests)
    assert first_last.text.startswith("go") and first_last.metadata.kind is None
    assert second_last.metadata.kind == TURN_CONTEXT_KIND
    assert provider.requests[1].messages[-2].tool_responses
    assert store is not None and session.id is not None
    assert all("<turn-context>" not in m.text for m in store.load_messages(session.id))
    # everything the first request sent before its block is sent unchanged by the second
    # (the prompt cache reads it), and the Anthropic wire keeps the block after the breakpoint
    first, second = provider.requests
    assert first.system == second.system
    assert second.messages[: len(first.messages) - 1] == first.messages[:-1]
    wire = to_wire_messages(second.messages)
    last_turn = wire[-1]["content"]
    assert last_turn[-1]["text"].startswith("<turn-context>")
    assert "cache_control" not in last_turn[-1]
    assert "cache_control" in last_turn[-2] and last_turn[-2]["type"] == "tool_result"


async def test_compaction_mid_tool_loop_then_finishes(tmp_path: Path) -> None:
    steps: list[Step] = [
        ScriptedReply(
            tool_calls=call("developer__shell", command="echo one").tool_calls,
            usage=Usage(input_tokens=8_000, output_tokens=50),
        ),
        ScriptedReply(
            tool_calls=call("developer__shell", command="echo two").tool_calls,
            usage=Usage(input_tokens=30_000, output_tokens=50),
        ),
        SUMMARY,
        "Finished after compaction.",
    ]
    agent, provider, store = make_agent(
        tmp_path, steps, context_limit=40_000, auto_compact_threshold=0.5
    )
    session = agent.new_session()
    events, finished = await run_turn(agent, session, "do two things")
    assert (
        finished.stop_reason == "end_turn" and finished.final_text == "Finished after compaction."
    )
    started = [e for e in events if isinstance(e, CompactionStarted)]
    assert [e.trigger for e in started] == ["threshold"]
    done = next(e for e in events if isinstance(e, CompactionFinished))
    assert done.structured and done.tokens_after < 20_000
    summary_request = provider.requests[2]
    assert summary_request.fast and "echo two" in summary_request.system
    after = provider.requests[3].messages
    assert "make the file" in after[0].text
    assert after[1].role == "assistant" and "summary" in after[1].text
    assert after[2].text.startswith("do two things")
    assert_valid_requests(provider)
    assert store is not None and session.id is not None
    stored = store.load_messages(session.id)
    originals = [m for m in stored if m.metadata.kind is None and m.created <= stored[-1].created]
    assert any(not m.metadata.agent_visible and m.text == "do two things" for m in originals)
    assert fix_conversation([*stored, Message.user("next")])[1] == []


async def test_overflow_compacts_and_retries(tmp_path: Path) -> None:
    steps: list[Step] = [
        "first answer",
        ContextLengthExceeded("prompt is too long: 210000 tokens > 200000 maximum"),
        SUMMARY,
        "second answer",
    ]
    agent, provider, _ = make_agent(tmp_path, steps)
    session = agent.new_session()
    await run_turn(agent, session, "one " + "with many details " * 100)
    events, finished = await run_turn(agent, session, "two")
    assert finished.final_text == "second answer"
    assert [e.trigger for e in events if isinstance(e, CompactionStarted)] == ["overflow"]
    retried = provider.requests[-1].messages
    assert retried[-1].text.startswith("two")
    assert_valid_requests(provider)


async def test_repeated_overflow_stops_with_a_clear_error(tmp_path: Path) -> None:
    overflow = ContextLengthExceeded("prompt is too long")
    steps: list[Step] = [overflow, SUMMARY, overflow, SUMMARY, overflow]
    agent, provider, _ = make_agent(tmp_path, steps)
    session = agent.new_session()
    events, finished = await run_turn(agent, session, "hi " + "with many details " * 100)
    assert finished.stop_reason == "context_exceeded"
    assert finished.error is not None and "larger context window" in finished.error
    assert any(isinstance(e, ErrorEvent) for e in events)
    provider.assert_complete()


async def test_cancelling_during_a_tool_answers_every_call(tmp_path: Path) -> None:
    agent, _, store = make_agent(tmp_path, [call("developer__shell", command="sleep 30")])
    session = agent.new_session()
    seen: asyncio.Queue[object] = asyncio.Queue()

    async def consume() -> list[object]:
        out: list[object] = []
        async for event in agent.reply(session, "wait"):
            out.append(event)
            await seen.put(event)
        return out

    task = asyncio.create_task(consume())
    while not isinstance(await asyncio.wait_for(seen.get(), timeout=10), ToolCall):
        pass
    await asyncio.sleep(0)
    task.cancel()
    events = await task
    finished = events[-1]
    assert getattr(finished, "stop_reason", None) == "cancelled"
    last = session.messages[-1]
    assert last.tool_responses and "Cancelled" in last.tool_responses[0].text()
    assert store is not None and session.id is not None
    stored = store.load_messages(session.id)
    assert fix_conversation([*stored, Message.user("again")])[1] == []


async def test_subdirectory_hints_arrive_after_a_tool_touches_a_nested_dir(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    (work / "AGENTS.md").write_text("Root rule: be brief.\n")
    (work / "pkg").mkdir()
    (work / "pkg" / "AGENTS.md").write_text("Package rule: use tabs.\n")
    (work / "pkg" / "mod.py").write_text("x = 1\n")
    agent, provider, _ = make_agent(tmp_path, [call("developer__view", path="pkg/mod.py"), "seen"])
    session = agent.new_session()
    events, _ = await run_turn(agent, session, "look at pkg")
    assert "Root rule: be brief." in provider.requests[0].system
    assert "Package rule" not in provider.requests[0].system
    loaded = [e for e in events if isinstance(e, HintsLoaded)]
    assert loaded and loaded[0].directories[0].endswith("pkg")
    second = provider.requests[1]
    assert second.system == provider.requests[0].system
    hints = [m for m in second.messages if "Package rule: use tabs." in m.text]
    assert hints and not hints[0].is_user_visible
    assert_valid_requests(provider)


async def test_headless_ask_becomes_a_denial_the_model_sees(tmp_path: Path) -> None:
    agent, provider, _ = make_agent(
        tmp_path, [call("developer__shell", command="rm -rf build"), "ok, skipped"], mode="approve"
    )
    session = agent.new_session()
    events, finished = await run_turn(agent, session, "clean")
    assert finished.permission_denied
    denial = provider.requests[1].messages[-2].tool_responses[0]
    assert denial.is_error and "Permission denied" in denial.text()
    assert any(isinstance(e, PermissionRequest) and e.granted is False for e in events)


async def test_approver_decides_in_approve_mode(tmp_path: Path) -> None:
    asked: list[ToolRequest] = []

    async def approve(request: ToolRequest, reason: str) -> bool:
        asked.append(request)
        return True

    agent, provider, _ = make_agent(
        tmp_path,
        [call("developer__shell", command="echo yes"), "ran"],
        mode="approve",
        approver=approve,
    )
    session = agent.new_session()
    _, finished = await run_turn(agent, session, "go")
    assert [r.name for r in asked] == ["developer__shell"]
    assert not finished.permission_denied
    assert "yes" in provider.requests[1].messages[-2].tool_responses[0].text()


async def test_max_turns_stops_the_loop(tmp_path: Path) -> None:
    steps: list[Step] = [call("developer__shell", command=f"echo {i}") for i in range(2)]
    agent, provider, _ = make_agent(tmp_path, steps, max_turns=2)
    session = agent.new_session()
    _, finished = await run_turn(agent, session, "loop")
    assert finished.stop_reason == "max_turns" and finished.turns == 2
    provider.assert_complete()


async def test_hybrid_masks_and_folds_old_results_and_recall_brings_them_back(
    tmp_path: Path,
) -> None:
    outputs = [f"line {i} " + "x" * 600 for i in range(14)]
    steps: list[Step] = [call("developer__shell", command=f"echo '{o}'") for o in outputs]
    seen: list[str] = []

    def list_folded(request: ScriptedRequest) -> ScriptedReply:
        seen.extend(p.text() for m in request.messages for p in m.tool_responses)
        seen.extend(m.text for m in request.messages if m.role == "user")
        return ScriptedReply.tool_call("context__recall", {"id": "folded"})

    def recall_oldest(request: ScriptedRequest) -> ScriptedReply:
        listing = request.messages[-2].tool_responses[0].text()
        oldest = re.search(r"^- (\S+):", listing, re.MULTILINE)
        assert oldest is not None, listing
        return ScriptedReply.tool_call("context__recall", {"id": oldest.group(1)})

    steps += [list_folded, recall_oldest, "recalled"]
    # The scripted provider bills no cache, so trimming pays as soon as a call is old.
    agent, provider, store = make_agent(tmp_path, steps, mask_keep_last=2)
    session = agent.new_session()
    events, finished = await run_turn(agent, session, "print many things")
    assert finished.final_text == "recalled"
    trimmed = {e.strategy for e in events if isinstance(e, ContextTrimmed)}
    assert trimmed == {"mask", "fold"}
    assert any("hidden to save context" in t for t in seen), "placeholders for old outputs"
    assert any(t.startswith("[Folded tool calls:") for t in seen), "one note for older ones"
    recalled = provider.requests[-1].messages[-2].tool_responses[0].text()
    assert "line 0 " in recalled
    assert store is not None and session.id is not None
    stored = store.load_messages(session.id)
    results = [m for m in stored if m.tool_responses]
    assert any(m.metadata.masked and "line 0 " in m.tool_responses[0].text() for m in results)
    # the long echo commands of old calls are cut too, and kept whole in the store
    assert any(m.metadata.masked and m.tool_requests for m in stored)
    assert_valid_requests(provider)


async def test_resume_continues_the_stored_session(tmp_path: Path) -> None:
    agent, _, store = make_agent(tmp_path, ["first"])
    session = agent.new_session()
    await run_turn(agent, session, "one")
    session.release()
    assert store is not None and session.id is not None
    again, provider, _ = make_agent(tmp_path, ["second"])
    again.store = store
    resumed = again.resume_session(session.id)
    _, finished = await run_turn(again, resumed, "two")
    assert finished.final_text == "second"
    assert [m.text for m in provider.requests[0].messages[:3]] == [
        "one",
        "first",
        provider.requests[0].messages[2].text,
    ]
    assert provider.requests[0].messages[2].text.startswith("two")


async def test_a_reply_cut_by_the_output_limit_is_reported(tmp_path: Path) -> None:
    agent, _, _ = make_agent(
        tmp_path, [ScriptedReply(text="The answer is", stop_reason="max_tokens")]
    )
    session = agent.new_session()
    events, finished = await run_turn(agent, session, "long question")
    assert finished.final_text == "The answer is"
    assert any(isinstance(e, Notice) and "output limit" in e.text for e in events)


class _SilentProvider(ScriptedProvider):
    """A model that never answers: its stream waits until cancelled."""

    def __init__(self) -> None:
        super().__init__()
        self.started = asyncio.Event()

    async def stream(self, *args: object, **kwargs: object) -> AsyncIterator[StreamEvent]:
        self.started.set()
        await asyncio.Event().wait()
        yield Completed(Message.assistant("never"), Usage())


async def test_cancelling_before_the_model_says_anything_keeps_the_turns_alternating(
    tmp_path: Path,
) -> None:
    agent, _, store = make_agent(tmp_path, [])
    silent = _SilentProvider()
    agent.provider = silent
    session = agent.new_session()
    task = asyncio.create_task(run_turn(agent, session, "are you there?"))
    await silent.started.wait()
    task.cancel()
    _, finished = await task
    assert finished.stop_reason == "cancelled"
    note = session.messages[-1]
    assert note.role == "assistant" and note.metadata.kind == "interrupted"
    assert not note.is_user_visible and note.is_agent_visible
    assert store is not None and session.id is not None
    stored = store.load_messages(session.id)
    assert fix_conversation([*stored, Message.user("hello again")])[1] == []
