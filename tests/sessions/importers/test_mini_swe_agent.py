"""mini-swe-agent trajectories: system prompt apart, exit role, format errors, extra ignored."""

from __future__ import annotations

from pathlib import Path

from gosling.conversation import ThinkingContent, fix_conversation
from gosling.sessions.importers import EXIT_KIND, ImportedTranscript, load_transcripts

FIXTURE = Path(__file__).parent / "fixtures" / "mini_swe_agent.traj.json"


def _load() -> ImportedTranscript:
    [transcript] = load_transcripts(FIXTURE)
    return transcript


def test_the_system_message_is_the_system_prompt_not_a_message() -> None:
    transcript = _load()
    assert transcript.source_format == "mini-swe-agent"
    assert transcript.system_prompt == "You are a helpful assistant that can run shell commands."
    assert transcript.messages[0].text.startswith("<pr_description>")
    assert all("helpful assistant" not in m.text for m in transcript.messages)


def test_reasoning_content_becomes_thinking_before_the_call() -> None:
    first = _load().messages[1]
    assert isinstance(first.content[0], ThinkingContent)
    assert first.content[0].thinking == "Start by looking at the file."
    assert first.tool_requests[0].arguments == {"command": "cat app.py"}


def test_the_exit_message_is_a_note_for_the_user_only() -> None:
    transcript = _load()
    note = transcript.messages[-1]
    assert note.role == "user" and note.metadata.kind == EXIT_KIND
    assert note.metadata.user_visible and not note.metadata.agent_visible
    assert note.text.startswith("Exit status: Submitted\n\ndiff --git a/app.py")


def test_the_final_submit_call_stays_unanswered_and_fix_drops_only_it() -> None:
    transcript = _load()
    assert transcript.stats.tool_calls == 3
    assert transcript.stats.tool_results == 2
    assert transcript.stats.unanswered_tool_calls == 1
    fixed, issues = fix_conversation(transcript.messages)
    assert issues == [
        "Removed orphaned tool request 'call_3'",
        "Removed trailing assistant message",
    ]
    assert sum(len(m.tool_responses) for m in fixed) == 2


def test_a_format_error_is_a_user_message_after_the_last_result() -> None:
    messages = _load().messages
    error = messages[3]
    assert error.role == "user" and error.effective_role == "user"
    assert error.text.startswith("Tool call error:")
    assert messages[2].effective_role == "tool"


def test_extra_dicts_are_ignored() -> None:
    transcript = _load()
    assert all("repeated provider response" not in m.text for m in transcript.messages)
    assert transcript.stats.records == 9
    assert transcript.stats.skipped == {}
    assert transcript.info["exit_status"] == "Submitted"
    assert transcript.title == "demo__app-1"
