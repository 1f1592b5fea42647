"""Claude Code session logs: split responses, tool results in user records, odd lines."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from gosling.conversation import (
    ThinkingContent,
    ToolRequest,
    ToolResponse,
    fix_conversation,
    is_valid_agent_view,
)
from gosling.sessions.importers import ImportedTranscript, load_transcripts, parse_transcripts

FIXTURE = Path(__file__).parent / "fixtures" / "claude_code_session.jsonl"


def _load() -> ImportedTranscript:
    [transcript] = load_transcripts(FIXTURE)
    return transcript


def test_blocks_of_one_response_become_one_assistant_message() -> None:
    transcript = _load()
    assistant = transcript.messages[1]
    assert assistant.role == "assistant"
    kinds = [part.type for part in assistant.content]
    assert kinds == ["thinking", "text", "tool_request", "tool_request"]
    thinking = assistant.content[0]
    assert isinstance(thinking, ThinkingContent) and thinking.signature == "sig-A"
    assert [r.name for r in assistant.tool_requests] == ["Bash", "Read"]


def test_tool_results_from_separate_records_form_one_user_message() -> None:
    transcript = _load()
    results = transcript.messages[2]
    assert results.role == "user"
    responses = results.tool_responses
    assert [(r.id, r.is_error) for r in responses] == [("toolu_1", False), ("toolu_2", True)]
    assert responses[0].text() == "README.md\nsrc"
    assert responses[1].text() == "File does not exist."


def test_comment_lines_and_broken_lines_are_counted_not_fatal() -> None:
    stats = _load().stats
    assert stats.skipped["comment line"] == 1
    assert stats.skipped["line is not JSON"] == 1


def test_unknown_and_bookkeeping_records_are_skipped_by_reason() -> None:
    stats = _load().stats
    assert stats.records == 16
    assert stats.record_kinds["hologram"] == 1
    for reason in ("hologram record", "progress record", "queue-operation record"):
        assert stats.skipped[reason] == 1, reason
    assert stats.skipped["assistant block 'server_tool_use'"] == 1
    assert (stats.tool_calls, stats.tool_results) == (2, 2)


def test_sidechain_records_stay_out_of_the_main_conversation() -> None:
    transcript = _load()
    assert all("Sub-agent chatter" not in m.text for m in transcript.messages)
    assert transcript.stats.skipped["sidechain record"] == 1


def test_meta_records_reach_the_model_but_not_the_user() -> None:
    last = _load().messages[-1]
    assert last.text.startswith("Stop hook feedback")
    assert last.metadata.agent_visible and not last.metadata.user_visible


def test_title_info_and_timestamps_come_from_the_records() -> None:
    transcript = _load()
    assert transcript.title == "Reading the demo README"  # the last summary wins
    assert transcript.info["cwd"] == "/work/demo"
    assert transcript.info["model"] == "claude-demo-1"
    assert transcript.system_prompt is None
    assert transcript.messages[0].created == 1767261601  # 2026-01-01T10:00:01Z


def test_the_imported_conversation_is_a_valid_agent_view() -> None:
    messages = _load().messages
    assert is_valid_agent_view([m for m in messages if m.metadata.agent_visible])
    assert fix_conversation(messages)[1] == []


def _record(kind: str, message_id: str, block: Mapping[str, object]) -> str:
    message = {"id": message_id, "role": kind, "content": [block]}
    return json.dumps({"type": kind, "sessionId": "s", "parentUuid": None, "message": message})


def test_a_repeated_message_id_after_new_user_input_starts_a_new_message() -> None:
    # A resumed session copies its history: the same API message id shows up again later.
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}
    again = {"type": "text", "text": "again"}
    lines = [
        _record("assistant", "m1", call),
        _record("user", "", result),
        _record("user", "", again),
        _record("assistant", "m1", call),
        _record("user", "", result),
    ]
    [transcript] = parse_transcripts("\n".join(lines), format="claude-code")
    assert [m.role for m in transcript.messages] == [
        "assistant",
        "user",
        "user",
        "assistant",
        "user",
    ]
    assert transcript.stats.tool_calls == 2
    assert transcript.stats.unanswered_tool_calls == 0


def test_tool_results_come_before_text_that_shares_their_record() -> None:
    block_result = {"type": "tool_result", "tool_use_id": "t1", "content": [], "is_error": False}
    record = {
        "type": "user",
        "sessionId": "s",
        "message": {"role": "user", "content": [{"type": "text", "text": "also"}, block_result]},
    }
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "true"}}
    text = "\n".join([_record("assistant", "m1", call), json.dumps(record)])
    [transcript] = parse_transcripts(text)
    results, note = transcript.messages[1:]
    assert isinstance(results.content[0], ToolResponse) and results.content[0].content == ()
    assert note.text == "also"
    assert isinstance(transcript.messages[0].content[0], ToolRequest)
