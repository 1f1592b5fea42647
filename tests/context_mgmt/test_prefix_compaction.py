"""The prefix form of the compaction call (issue 27 item 1): the session's request as last
sent with the instruction last; tool results blanked middle-out on overflow, then the
transcript form; the transcript form stays `summarize()`'s default and the choice for
providers without a cache."""

from __future__ import annotations

from pathlib import Path

from gosling.agent.agent import Agent
from gosling.agent.config import Settings
from gosling.agent.events import CompactionFinished
from gosling.agent.system_prompt import RequestPrefix
from gosling.context_mgmt import summarize
from gosling.context_mgmt.prefix_form import BLANKED_RESULT, SessionPrefix
from gosling.conversation import Message, ToolResponse, fix_agent_view
from gosling.providers import (
    ContextLengthExceeded,
    ModelConfig,
    ScriptedProvider,
    ScriptedReply,
    ToolSpec,
    Usage,
)

from .builders import STRUCTURED_REPLY, tool_session

SYSTEM = "You are the session's agent. (its own system prompt)"
TOOLS = (ToolSpec("developer__shell", "run a command"),)


def _prefix(messages: list[Message]) -> SessionPrefix:
    return SessionPrefix(SYSTEM, TOOLS, messages)


def _results(request_messages: tuple[Message, ...]) -> list[str]:
    return [
        "".join(getattr(c, "text", "") for c in p.content)
        for m in request_messages
        for p in m.content
        if isinstance(p, ToolResponse)
    ]


async def test_the_call_resends_the_session_prefix_with_the_request_last() -> None:
    view = [*tool_session(3), Message.assistant("Done reading.")]
    provider = ScriptedProvider([STRUCTURED_REPLY])
    summary = await summarize(provider, view, form="prefix", prefix=_prefix(view))

    (request,) = provider.requests
    assert request.system == SYSTEM and request.tools == TOOLS  # the cached prefix
    assert list(request.messages[:-1]) == view  # as last sent, byte for byte
    ask = request.messages[-1].text
    assert ask.startswith("<compaction-request>") and "do\nnot call any" in ask
    assert "every <turn-context> block" in ask  # excluded from the notes
    assert summary.form == "prefix" and summary.structured is not None


async def test_after_the_users_own_text_the_request_joins_that_message() -> None:
    view = [Message.user("hello"), Message.assistant("hi"), Message.user("summarize later")]
    provider = ScriptedProvider([STRUCTURED_REPLY])
    await summarize(provider, view, form="prefix", prefix=_prefix(view))
    last = provider.requests[0].messages[-1]
    assert last.text.startswith("summarize later\n<compaction-request>")
    assert len(provider.requests[0].messages) == 3


async def test_overflow_blanks_tool_results_middle_out_then_falls_back_to_the_transcript() -> None:
    view = tool_session(4)
    too_long = ContextLengthExceeded("prompt is too long")
    provider = ScriptedProvider([too_long] * 5 + [STRUCTURED_REPLY])
    summary = await summarize(provider, view, form="prefix", prefix=_prefix(view))

    prefix_calls = [r for r in provider.requests if r.system == SYSTEM]
    blanked = [sum(r == BLANKED_RESULT for r in _results(c.messages)) for c in prefix_calls]
    assert blanked == [0, 1, 2, 4]  # 0%, 10%, 50%, 100%: 20% would resend 10%'s bytes
    # The middle result goes first; the first and last results stay until the end.
    second = _results(prefix_calls[1].messages)
    assert second[0] != BLANKED_RESULT and second[-1] != BLANKED_RESULT
    for call in prefix_calls:  # every call keeps its answer: nothing to repair
        assert fix_agent_view(list(call.messages))[1] == []
    fallback = provider.requests[-1]
    assert "<conversation>" in fallback.system and fallback.tools == ()
    assert summary.form == "transcript"


async def test_a_prefix_summary_says_how_many_tool_results_were_blanked_for_it() -> None:
    view = tool_session(4)
    at_once = await summarize(
        ScriptedProvider([STRUCTURED_REPLY]), view, form="prefix", prefix=_prefix(view)
    )
    assert (at_once.removal_percent, at_once.removed_tool_responses) == (0, 0)
    too_long = ContextLengthExceeded("prompt is too long")
    provider = ScriptedProvider([too_long, too_long, STRUCTURED_REPLY])
    later = await summarize(provider, view, form="prefix", prefix=_prefix(view))
    blanked = sum(r == BLANKED_RESULT for r in _results(provider.requests[-1].messages))
    assert later.form == "prefix" and later.removed_tool_responses == blanked == 2


async def test_summarize_called_directly_keeps_the_transcript_form() -> None:
    view = tool_session(2)
    provider = ScriptedProvider([STRUCTURED_REPLY])
    summary = await summarize(provider, view, prefix=_prefix(view))
    assert "<conversation>" in provider.requests[0].system
    assert summary.form == "transcript"


def _compacting_session(tmp_path: Path, cache: str) -> tuple[Agent, ScriptedProvider]:
    reply = ScriptedReply(
        text=STRUCTURED_REPLY,
        usage=Usage(input_tokens=40_000, output_tokens=900, cache_read_tokens=38_000),
    )
    provider = ScriptedProvider([reply], model_config=ModelConfig("m", context_limit=200_000))
    agent = Agent(provider, config=Settings(prompt_cache=cache), working_dir=tmp_path)
    return agent, provider


async def test_the_session_uses_the_prefix_form_when_its_provider_caches(tmp_path: Path) -> None:
    agent, provider = _compacting_session(tmp_path, "anthropic")
    session = agent.open_session([*tool_session(3), Message.assistant("x " * 400)])
    session.prefix = RequestPrefix(SYSTEM, TOOLS, "")
    events = [e async for e in session.pipeline.compact(session, trigger="manual")]
    (finished,) = [e for e in events if isinstance(e, CompactionFinished)]
    assert provider.requests[0].system == SYSTEM
    assert finished.form == "prefix"
    assert finished.summary_usage is not None
    assert finished.summary_usage["cache_share"] == 0.95  # 38,000 of 40,000 read
    assert finished.to_json()["summary_usage"]["cache_read_tokens"] == 38_000


async def test_without_a_cache_the_session_uses_the_transcript_form(tmp_path: Path) -> None:
    agent, provider = _compacting_session(tmp_path, "none")
    session = agent.open_session([*tool_session(3), Message.assistant("x " * 400)])
    session.prefix = RequestPrefix(SYSTEM, TOOLS, "")
    events = [e async for e in session.pipeline.compact(session, trigger="manual")]
    (finished,) = [e for e in events if isinstance(e, CompactionFinished)]
    assert "<conversation>" in provider.requests[0].system
    assert finished.form == "transcript"


async def test_a_broken_prefix_prompt_fails_compaction_naming_it_before_any_call() -> None:
    from gosling.context_mgmt import CompactionFailed, CompactionTemplates

    view = tool_session(2)
    provider = ScriptedProvider([STRUCTURED_REPLY])
    templates = CompactionTemplates(prefix="{{ history }}")
    try:
        await summarize(provider, view, form="prefix", prefix=_prefix(view), templates=templates)
    except CompactionFailed as failure:
        assert failure.reason == "prompt_template"
        assert "CompactionTemplates" in str(failure)
    else:
        raise AssertionError("a broken prefix prompt must fail the compaction")
    assert provider.requests == []
