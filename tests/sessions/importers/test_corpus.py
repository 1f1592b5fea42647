"""The five real transcripts of the shared corpus import with the counts SOURCES.md states.

The corpus is in the repository (`corpus/transcripts`); without it these
tests skip. The expected numbers are copied from SOURCES.md, which counted them from the raw
files independently of gosling.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from gosling.conversation import fix_conversation
from gosling.sessions.importers import ImportedTranscript, load_transcripts

CORPUS = Path(__file__).resolve().parents[3] / "corpus" / "transcripts"

needs_corpus = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the transcript corpus is not at {CORPUS}"
)

# Issues fix_conversation may report on a faithful import: placeholders for empty results,
# joining user messages the agent sent together, and dropping the calls a run ended on.
BENIGN = re.compile(
    r"Added placeholder to empty tool result|Merged consecutive user messages|"
    r"Removed orphaned tool request|Removed trailing assistant message|Removed empty message"
)


def _load(name: str) -> list[ImportedTranscript]:
    return load_transcripts(CORPUS / name)


def _check_fix(transcript: ImportedTranscript) -> None:
    fixed, issues = fix_conversation(transcript.messages)
    assert all(BENIGN.match(issue) for issue in issues), issues
    dropped = [i for i in issues if i.startswith("Removed orphaned tool request")]
    assert len(dropped) == transcript.stats.unanswered_tool_calls
    assert sum(len(m.tool_responses) for m in fixed) == transcript.stats.tool_results


def _tool_names(transcript: ImportedTranscript) -> Counter[str]:
    return Counter(r.name for m in transcript.messages for r in m.tool_requests)


def _result_chars(transcript: ImportedTranscript) -> tuple[int, int]:
    sizes = [len(r.text()) for m in transcript.messages for r in m.tool_responses]
    return max(sizes), sum(sizes)


DJANGO = "minisweagent_django-13964_deepseek-chat.traj.json"
MARSHMALLOW = "minisweagent_marshmallow-1343_deepseek-reasoner.traj.json"


@needs_corpus
@pytest.mark.parametrize(
    ("name", "records", "calls", "results", "chars", "users"),
    [
        (DJANGO, 333, 165, 164, (8870, 121136), 2),
        (MARSHMALLOW, 174, 86, 85, (4088, 57363), 1),
    ],
)
def test_mini_swe_agent_trajectories(
    name: str, records: int, calls: int, results: int, chars: tuple[int, int], users: int
) -> None:
    [transcript] = _load(name)
    stats = transcript.stats
    assert (stats.records, stats.tool_calls, stats.tool_results) == (records, calls, results)
    assert stats.record_kinds["assistant"] == calls
    assert stats.record_kinds["user"] == users
    assert stats.record_kinds["exit"] == 1
    assert stats.unanswered_tool_calls == 1  # the submit command
    assert stats.skipped == {}
    assert transcript.system_prompt
    assert _result_chars(transcript) == chars
    _check_fix(transcript)


@needs_corpus
def test_claude_code_session_share() -> None:
    [transcript] = _load("claudecode_session-share_general-tool-calls.jsonl")
    stats = transcript.stats
    assert (stats.records, stats.skipped["comment line"]) == (560, 2)
    assert (stats.tool_calls, stats.tool_results) == (110, 109)
    thinking = sum(p.type == "thinking" for m in transcript.messages for p in m.content)
    assert thinking == 98
    assert sum(r.is_error for m in transcript.messages for r in m.tool_responses) == 7
    assert _tool_names(transcript) == Counter(
        Bash=39, Edit=12, WebSearch=11, WebFetch=11, Read=9, Write=9, TodoWrite=4,
        ExitPlanMode=4, Glob=3, AskUserQuestion=2, TaskOutput=2, KillShell=2, Skill=2,
    )  # fmt: skip
    assert _result_chars(transcript) == (6950, 195026)
    _check_fix(transcript)


@needs_corpus
def test_claude_code_python_to_rust_port() -> None:
    [transcript] = _load("claudecode_claude-reliability_python-to-rust-port.jsonl")
    stats = transcript.stats
    assert stats.records == 97
    assert stats.record_kinds == {"queue-operation": 1, "user": 41, "assistant": 55}
    assert (stats.tool_calls, stats.tool_results) == (39, 39)
    assert _tool_names(transcript) == Counter(
        Bash=16, TodoWrite=10, Write=7, Read=3, Task=1, Edit=1, Glob=1
    )
    _check_fix(transcript)


@needs_corpus
def test_openhands_runs() -> None:
    runs = _load("openhands_multi-swe-bench_ponyc_output.jsonl")
    assert [r.title for r in runs] == [
        "ponylang__ponyc-4595",
        "ponylang__ponyc-4593",
        "ponylang__ponyc-4588",
    ]
    assert [r.stats.records for r in runs] == [49, 70, 103]
    assert [r.stats.tool_calls for r in runs] == [23, 33, 49]
    assert [r.stats.kinds_starting("observation:") for r in runs] == [23, 34, 51]
    for run, (run_calls, edits, reads) in zip(
        runs, [(13, 2, 6), (12, 11, 9), (24, 16, 8)], strict=True
    ):
        kinds = run.stats.record_kinds
        assert (kinds["action:run"], kinds["action:edit"], kinds["action:read"]) == (
            run_calls,
            edits,
            reads,
        )
        assert run.system_prompt
        _check_fix(run)
