"""The public API in `gosling/__init__.py`: every name loads, tokens and the model's view,
compaction in async and sync forms (inside a running loop too), and FunctionProvider."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

import gosling
from gosling import (
    CompactionResult,
    Conversation,
    FunctionProvider,
    Message,
    TextContent,
    ToolRequest,
    ToolResponse,
    ToolSpec,
    Usage,
)
from gosling.context_mgmt.tokens import default_counter
from tests.context_mgmt.builders import STRUCTURED_REPLY, calls, results

REPO = Path(__file__).resolve().parents[2]
BIG_OUTPUT = "line of build output that nobody needs any more\n" * 40


def test_every_public_name_loads_and_is_listed() -> None:
    for name in gosling.__all__:
        assert getattr(gosling, name) is not None, name
    assert set(gosling.__all__) <= set(dir(gosling))
    with pytest.raises(AttributeError, match="no attribute 'compact_messages'"):
        _ = gosling.compact_messages


def test_count_tokens_counts_system_messages_and_tools() -> None:
    messages = [Message.user("hello there"), Message.assistant("general kenobi")]
    tool = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}})
    bare = gosling.count_tokens(messages)
    assert bare == default_counter().count_chat("", messages)
    assert gosling.count_tokens(messages, system="You are terse.") > bare
    assert gosling.count_tokens(messages, tools=[tool]) > bare


def _masked_session() -> list[Message]:
    return [
        Message.user("build it"),
        calls("c1", name="shell", command="make"),
        results(("c1", BIG_OUTPUT)).with_metadata(results(("c1", "")).metadata.with_masked()),
        Message.assistant("built"),
        Message.user("thanks"),
        calls("c2", name="shell", command="ls"),  # never answered: repaired away
    ]


def test_model_view_applies_masking_and_pair_repair_where_agent_view_does_not() -> None:
    messages = _masked_session()
    view = gosling.model_view(messages)
    result_text = view[2].tool_responses[0].text()
    assert "nobody needs" not in result_text and "context__recall" in result_text
    assert all(
        not m.tool_requests or m.tool_requests[0].id != "c2" or m.tool_responses for m in view
    )
    answered = {r.id for m in view for r in m.tool_responses}
    assert {r.id for m in view for r in m.tool_requests} <= answered
    whole = Conversation(messages).agent_view()
    assert "nobody needs" in whole[2].tool_responses[0].text()  # masking is not its business
    assert gosling.count_tokens(view) < gosling.count_tokens(whole)


def test_needs_compaction_measures_the_view_against_the_window() -> None:
    messages = _masked_session()
    tokens = gosling.count_tokens(gosling.model_view(messages))
    assert gosling.needs_compaction(messages, int(tokens / 0.9))  # 90% full
    assert not gosling.needs_compaction(messages, int(tokens / 0.7))  # 70% full
    assert not gosling.needs_compaction(messages, tokens, threshold=1.0)


def _summarizer(calls_seen: list[str]) -> FunctionProvider:
    def model(system: str, messages: Sequence[Message]) -> tuple[Message, Usage]:
        calls_seen.append(system)
        if "hand-over notes" in system:
            return Message.assistant(STRUCTURED_REPLY), Usage(input_tokens=100, output_tokens=20)
        return Message.assistant("answer"), Usage(input_tokens=10, output_tokens=2)

    return FunctionProvider(model, context_limit=10_000)


HISTORY = [Message.user("fix the parser"), Message.assistant("on it"), Message.user("go")]


def test_compact_sync_outside_an_event_loop() -> None:
    seen: list[str] = []
    result = gosling.compact_sync(_summarizer(seen), HISTORY)
    assert isinstance(result, CompactionResult)
    assert "Fix the parser bug" in result.agent_view[0].text
    assert result.agent_view[-1].text == "go"
    assert result.usage.input_tokens == 100


async def test_sync_forms_work_inside_a_running_event_loop() -> None:
    seen: list[str] = []
    provider = _summarizer(seen)
    result = gosling.compact_sync(provider, HISTORY)
    summary = gosling.summarize_sync(provider, HISTORY)
    pair = [Message.user("look"), calls("c1", path="a.py"), results(("c1", "print(1)"))]
    note = gosling.summarize_tool_pair_sync(provider, pair, "c1")
    assert "Fix the parser bug" in result.agent_view[0].text
    assert "Fix the parser bug" in summary.message.text
    assert note.message.text
    assert len(seen) == 3


async def test_async_forms_and_an_async_function_provider() -> None:
    async def model(system: str, messages: Sequence[Message]) -> str:
        await asyncio.sleep(0)
        return STRUCTURED_REPLY

    result = await gosling.compact(FunctionProvider(model), HISTORY, manual=True)
    assert result.mode == "manual"
    summary = await gosling.summarize(FunctionProvider(model), HISTORY)
    assert summary.requests == 1


def test_run_sync_re_raises_the_coroutines_error_inside_a_loop() -> None:
    async def failing() -> None:
        raise ValueError("boom")

    async def outer() -> None:
        with pytest.raises(ValueError, match="boom"):
            gosling.run_sync(failing())

    asyncio.run(outer())


async def test_function_provider_passes_tools_when_asked_and_checks_replies() -> None:
    seen: list[tuple[str, ...]] = []

    def with_tools(system: str, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Message:
        seen.append(tuple(t.name for t in tools))
        return Message.assistant(None, ToolRequest(id="t1", name="read_file"))

    provider = FunctionProvider(with_tools)
    reply, _ = await provider.complete("", [Message.user("x")], [ToolSpec("read_file", "r")])
    assert seen == [("read_file",)] and reply.tool_requests[0].name == "read_file"
    events = [e async for e in provider.stream("", [Message.user("x")])]
    assert events[-1].message.tool_requests  # type: ignore[union-attr]

    bad = FunctionProvider(lambda system, messages: 42)  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="must return a str"):
        await bad.complete("", [Message.user("x")])
    with pytest.raises(TypeError, match="user Message"):
        await FunctionProvider(lambda s, m: Message.user("me")).complete("", [])
    with pytest.raises(TypeError, match="needs a callable"):
        FunctionProvider("not a function")  # type: ignore[arg-type]


def test_templates_come_from_the_caller_or_the_built_ins() -> None:
    assert "hand-over notes" in gosling.builtin_template("compaction.md")
    templates = gosling.CompactionTemplates(compaction="Summarize: {{ messages }}")
    seen: list[str] = []
    gosling.compact_sync(_summarizer(seen), HISTORY, templates=templates)
    assert seen[0].startswith('Summarize: {"role":"user"')


def test_text_content_round_trip_helper_types_are_the_packages_own() -> None:
    assert gosling.TextContent is TextContent and gosling.ToolResponse is ToolResponse


def test_library_warnings_stay_quiet_unless_the_application_configures_logging() -> None:
    import subprocess
    import sys

    probe = (
        "import logging, gosling.hints\n"
        "logging.getLogger('gosling.hints.imports').warning('QUIET-QZK')\n"
        "logging.basicConfig()\n"
        "logging.getLogger('gosling.hints.imports').warning('LOUD-QZK')\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert "QUIET-QZK" not in out.stderr and "LOUD-QZK" in out.stderr


def test_library_loggers_are_named_under_gosling() -> None:
    import importlib
    import logging

    for name in ("gosling.hints.imports", "gosling.context_mgmt.summarize"):
        logger = importlib.import_module(name).logger
        assert isinstance(logger, logging.Logger) and logger.name.startswith("gosling.")


def test_library_warnings_stay_off_an_unconfigured_applications_stderr(tmp_path: Path) -> None:
    """An application that never configured logging sees nothing from gosling on stderr
    (no last-resort handler output); one that did configure it gets the warning."""
    (tmp_path / "AGENTS.md").write_text("x" * 3_000_000)  # over the hint budget: skipped
    program = "import gosling, sys; sys.stdout.write(repr(gosling.load_hints(sys.argv[1])))"
    for configure, shown in (("", False), ("import logging; logging.basicConfig(); ", True)):
        result = subprocess.run(
            [sys.executable, "-c", configure + program, str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout == "''"
        assert ("hint file" in result.stderr and "skipped" in result.stderr) is shown
        if not shown:
            assert result.stderr == ""
