"""OpenHands event logs: several runs per file, actions and observations paired."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gosling.conversation import fix_conversation
from gosling.sessions.importers import ImportedTranscript, load_transcripts

FIXTURE = Path(__file__).parent / "fixtures" / "openhands_output.jsonl"


def _runs() -> list[ImportedTranscript]:
    return load_transcripts(FIXTURE)


def test_each_run_of_the_file_is_its_own_transcript() -> None:
    first, second = _runs()
    assert (first.title, second.title) == ("demo__parser-1", "demo__parser-2")
    assert first.system_prompt == "You are OpenHands agent."
    assert second.system_prompt == "System prompt two."
    assert second.info["error"].startswith("RuntimeError")
    assert first.stats.skipped["line is not an OpenHands run"] == 1


def test_calls_of_one_model_response_form_one_assistant_message() -> None:
    first = _runs()[0]
    assistant = first.messages[2]
    assert assistant.text == "I will check the tree and the tests together."
    assert [r.id for r in assistant.tool_requests] == ["call_a", "call_b"]
    results = first.messages[3]
    assert [(r.id, r.is_error) for r in results.tool_responses] == [
        ("call_a", False),
        ("call_b", True),
    ]
    assert results.tool_responses[0].text().endswith("[The command completed with exit code 0.]")


def test_observations_pair_by_cause_when_metadata_is_missing() -> None:
    first = _runs()[0]
    think = next(m for m in first.messages if any(r.name == "think" for r in m.tool_requests))
    answer = first.messages[first.messages.index(think) + 1]
    assert [r.id for r in answer.tool_responses] == ["call_c"]
    assert answer.tool_responses[0].text() == "Your thought has been logged."


def test_context_and_errors_outside_tool_calls_become_user_messages() -> None:
    first = _runs()[0]
    recall = first.messages[1]
    assert recall.metadata.kind == "recall"
    assert recall.metadata.agent_visible and not recall.metadata.user_visible
    assert "Use the GitHub API" in recall.text
    error = first.messages[4]
    assert error.effective_role == "user"
    assert error.text.startswith("Parameter 'command'")


def test_counts_cover_every_event() -> None:
    first = _runs()[0]
    stats = first.stats
    assert stats.records == 13
    assert stats.kinds_starting("observation:") == 6
    assert (stats.tool_calls, stats.tool_results, stats.unanswered_tool_calls) == (4, 3, 1)
    assert stats.skipped["agent_state_changed observation"] == 1
    assert stats.skipped["recall action (its observation carries the context)"] == 1


def test_a_python_repr_of_the_model_response_still_gives_the_arguments() -> None:
    second = _runs()[1]
    request = second.messages[1].tool_requests[0]
    assert request.arguments == {"command": "view", "path": "/w/a.c"}
    assert second.messages[-1].text == "a.c defines a main that returns 0."
    assert second.stats.skipped["delegate action without a tool call"] == 1


def test_fix_conversation_only_drops_the_unanswered_finish() -> None:
    first = _runs()[0]
    _, issues = fix_conversation(first.messages)
    assert "Removed orphaned tool request 'call_d'" in issues
    assert not any("tool response" in issue for issue in issues)


def test_a_plain_event_list_is_one_transcript(tmp_path: Path) -> None:
    run = json.loads(FIXTURE.read_text().splitlines()[1])
    path = tmp_path / "events.json"
    path.write_text(json.dumps(run["history"]))
    [transcript] = load_transcripts(path)
    assert transcript.source_format == "openhands"
    assert transcript.stats.tool_calls == 1
    assert transcript.title is None


def test_naive_event_times_are_read_as_utc_whatever_the_local_zone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected = int(datetime(2025, 4, 30, 16, 0, 1, tzinfo=UTC).timestamp())
    with monkeypatch.context() as patched:
        patched.setenv("TZ", "Asia/Tokyo")
        time.tzset()
        try:
            first = _runs()[0]
        finally:
            patched.undo()
    time.tzset()
    assert first.messages[0].created == expected
