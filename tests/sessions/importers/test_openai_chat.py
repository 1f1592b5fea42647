"""OpenAI chat JSON: tool messages joined per turn, orphans counted, shapes accepted."""

from __future__ import annotations

import json
from pathlib import Path

from gosling.conversation import ImageContent, fix_conversation
from gosling.sessions.importers import ImportedTranscript, load_transcripts

FIXTURE = Path(__file__).parent / "fixtures" / "openai_chat.json"


def _load() -> ImportedTranscript:
    [transcript] = load_transcripts(FIXTURE)
    return transcript


def test_consecutive_tool_messages_become_one_user_message() -> None:
    transcript = _load()
    results = transcript.messages[2]
    assert [r.id for r in results.tool_responses] == [
        "call_oslo",
        "call_bergen",
        "call_nobody_made",
    ]
    assert transcript.messages[3].role == "assistant"


def test_an_orphan_result_is_counted_and_fix_drops_exactly_it() -> None:
    transcript = _load()
    assert transcript.stats.orphan_tool_results == 1
    fixed, issues = fix_conversation(transcript.messages)
    assert "Removed orphaned tool response 'call_nobody_made'" in issues
    kept = [r.id for m in fixed for r in m.tool_responses]
    assert kept == ["call_oslo", "call_bergen"]


def test_arguments_that_are_not_json_keep_the_call_with_an_error() -> None:
    oslo, bergen = _load().messages[1].tool_requests
    assert oslo.arguments == {"city": "Oslo"} and oslo.error is None
    assert bergen.arguments == {}
    assert bergen.error is not None and '{"city": "Bergen"' in bergen.error


def test_images_system_prompt_and_late_instructions() -> None:
    transcript = _load()
    assert transcript.system_prompt == "You answer questions about the weather."
    assert transcript.title == "Weather lookup"
    image = transcript.messages[0].content[1]
    assert isinstance(image, ImageContent) and image.mime_type == "image/jpeg"
    late = transcript.messages[4]
    assert late.text == "Answer in one sentence from now on."
    assert late.metadata.agent_visible and not late.metadata.user_visible


def test_odd_messages_are_skipped_with_a_reason() -> None:
    stats = _load().stats
    assert stats.skipped == {
        "tool message without tool_call_id": 1,
        "message with role 'critic'": 1,
    }
    assert stats.records == 11


def test_a_bare_list_and_swe_agent_history_are_accepted(tmp_path: Path) -> None:
    calls = [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "listing", "tool_calls": repr(calls)},
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
    ]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(history))
    swe = tmp_path / "run.traj"
    swe.write_text(json.dumps({"history": history, "info": {}}))
    for path in (bare, swe):
        [transcript] = load_transcripts(path)
        assert transcript.source_format == "openai-chat"
        assert (transcript.stats.tool_calls, transcript.stats.tool_results) == (1, 1)


def test_json_lines_of_conversations_give_one_transcript_each(tmp_path: Path) -> None:
    path = tmp_path / "dataset.jsonl"
    lines = [
        {"messages": [{"role": "user", "content": "one"}, {"role": "assistant", "content": "1"}]},
        {"messages": [{"role": "user", "content": "two"}, {"role": "assistant", "content": "2"}]},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines))
    transcripts = load_transcripts(path)
    assert [t.messages[0].text for t in transcripts] == ["one", "two"]


def test_json_lines_of_messages_give_one_transcript(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    lines = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines))
    [transcript] = load_transcripts(path)
    assert transcript.system_prompt == "be brief"
    assert [m.role for m in transcript.messages] == ["user", "assistant"]
