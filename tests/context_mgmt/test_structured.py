"""The structured summary: candidate extraction, lenient decoding, the raw fallback and
rendering (reference §5)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from gosling.agent.user_inputs import use_user_prompts
from gosling.context_mgmt import FileActivity, StructuredSummary
from gosling.context_mgmt.structured import apply_structured, json_candidates
from gosling.prompts import override_dir


def _opt_in() -> Path:
    """The user's prompt override dir, opted into as the command line does."""
    use_user_prompts()
    directory = override_dir()
    assert directory is not None
    return directory


FULL_REPLY = """<analysis>
The user asked to fix a bug in parser.py; I traced it to {brace handling}.
</analysis>

```json
{
  "user_intent": ["Fix the parser bug", "Add a regression test"],
  "technical_concepts": ["off-by-one"],
  "files": [
    {"path": "src/parser.py", "summary": "Fixed the scan loop", "key_code": "def scan(self): ..."}
  ],
  "errors_and_fixes": ["IndexError: list index out of range -> early return"],
  "problem_solving": ["Root-caused with a failing unit test"],
  "user_messages": ["fix the parser bug", "add a test"],
  "pending_tasks": ["Add a regression test"],
  "current_work": "Writing tests/test_parser.py",
  "next_step": "Finish the regression test"
}
```"""


def test_a_full_reply_parses() -> None:
    summary = StructuredSummary.parse(FULL_REPLY)
    assert summary is not None
    assert summary.user_intent == ("Fix the parser bug", "Add a regression test")
    assert summary.files == (
        FileActivity("src/parser.py", "Fixed the scan loop", "def scan(self): ..."),
    )
    assert summary.current_work == "Writing tests/test_parser.py"
    assert summary.next_step == "Finish the regression test"


# -- lenient decoding --------------------------------------------------------------------------


def test_a_bare_string_becomes_a_one_item_list() -> None:
    summary = StructuredSummary.parse('{"user_intent": "fix the flaky test"}')
    assert summary is not None and summary.user_intent == ("fix the flaky test",)


def test_objects_become_key_value_text_in_document_order() -> None:
    text = json.dumps(
        {
            "errors_and_fixes": [
                {"error": "cursor drifted after batch 34", "fix": "bounded channel"},
                "plain entry",
                None,
            ],
            "current_work": {"task": "regression test", "status": "in progress"},
        }
    )
    summary = StructuredSummary.parse(text)
    assert summary is not None
    assert summary.errors_and_fixes == (
        "error: cursor drifted after batch 34; fix: bounded channel",
        "plain entry",
    )
    assert summary.current_work == "task: regression test; status: in progress"


def test_numbers_booleans_and_nested_arrays_become_text() -> None:
    text = json.dumps(
        {
            "pending_tasks": [42, True, 1.5],
            "technical_concepts": [["a", "b"], {"k": [1, None, "x"]}],
            "next_step": 7,
        }
    )
    summary = StructuredSummary.parse(text)
    assert summary is not None
    assert summary.pending_tasks == ("42", "true", "1.5")
    assert summary.technical_concepts == ("a; b", "k: 1; ; x")
    assert summary.next_step == "7"


def test_file_entries_decode_leniently() -> None:
    text = json.dumps(
        {
            "files": [
                "src/parser.py",
                {"path": "tests/test_parser.py", "summary": "Added a test", "other": 1},
                {
                    "path": "src/scan.py",
                    "summary": 42,
                    "key_code": ["def a(): ...", "def b(): ..."],
                },
                "",
                {},
                {"path": " ", "summary": "", "key_code": "  "},
            ]
        }
    )
    summary = StructuredSummary.parse(text)
    assert summary is not None
    assert summary.files == (
        FileActivity("src/parser.py", "", None),
        FileActivity("tests/test_parser.py", "Added a test", None),
        FileActivity("src/scan.py", "42", "def a(): ...; def b(): ..."),
    )


def test_a_file_entry_with_any_one_of_path_summary_or_code_is_kept() -> None:
    text = json.dumps(
        {
            "files": [
                {"path": "only/a/path.py"},
                {"summary": "Only words about a file"},
                {"key_code": "x = 1"},
            ]
        }
    )
    summary = StructuredSummary.parse(text)
    assert summary is not None
    assert summary.files == (
        FileActivity("only/a/path.py", "", None),
        FileActivity("", "Only words about a file", None),
        FileActivity("", "", "x = 1"),
    )


def test_a_single_file_object_or_path_is_accepted() -> None:
    one = StructuredSummary.parse('{"files": {"path": "a.py", "summary": "x"}}')
    assert one is not None and one.files == (FileActivity("a.py", "x"),)
    bare = StructuredSummary.parse('{"files": "b.py"}')
    assert bare is not None and bare.files == (FileActivity("b.py"),)


def test_blank_entries_are_dropped() -> None:
    text = json.dumps(
        {
            "user_intent": ["", "Fix the bug", "   "],
            "files": [{"path": "a.py", "summary": "Patched", "key_code": "  "}],
            "next_step": " ",
            "current_work": None,
        }
    )
    summary = StructuredSummary.parse(text)
    assert summary is not None
    assert summary.user_intent == ("Fix the bug",)
    assert summary.files == (FileActivity("a.py", "Patched", None),)
    assert summary.next_step is None and summary.current_work is None


def test_unknown_fields_are_kept_as_extra() -> None:
    summary = StructuredSummary.parse('{"user_intent": ["x"], "mood": {"level": 3}}')
    assert summary is not None
    assert summary.extra == {"mood": {"level": 3}}


def test_raw_newlines_inside_strings_are_tolerated() -> None:
    summary = StructuredSummary.parse('{"current_work": "line one\nline two"}')
    assert summary is not None and summary.current_work == "line one\nline two"


# -- raw-text fallback (reference §5.5) --------------------------------------------------------

FALLBACKS = {
    "prose": "Here is a summary of the conversation. The user asked about compaction.",
    "empty object": "{}",
    "only unknown fields": '{"notes": "unknown fields alone are not a summary"}',
    "only blank strings": '{"current_work": "", "user_intent": ["  "], "next_step": null}',
    "only empty files": '{"files": [{}, {"path": ""}], "user_intent": [" "]}',
    "not an object": '["a list", "is not a summary"]',
    "cut off mid-JSON": (
        '<analysis>ok</analysis>\n```json\n{"user_intent": ["Fix the bug"], '
        '"pending_tasks": ["Write tests", "Update docs'
    ),
    "quoted in prose": (
        'The session focused on the parser. The tracker entry {"current_work": "migrate"} '
        "is unchanged, and tests still need porting."
    ),
    "quoted in prose after analysis": (
        "<analysis>reviewing</analysis>\nA prose recap: the config was set to "
        '{"user_intent": ["quoted example"]} per the docs, then the run passed.'
    ),
    "example inside the scratchpad": (
        '<analysis>\nThe target shape is:\n```json\n{"user_intent": ["example only"]}\n```\n'
        "Now let me review.\n</analysis>\nSorry, I ran out of room for the summary."
    ),
    "cut off inside the scratchpad": (
        '<analysis>\nThe shape to produce:\n```json\n{"user_intent": ["example only"]}\n```\n'
        "Now the conversation: first the user"
    ),
    "scratchpad quoting its own terminator": (
        "<analysis>\nThe prompt ends with </analysis> and shows the shape:\n```json\n"
        '{"user_intent": ["example only"]}\n```\nNow let me review.\n</analysis>\n'
        "Sorry, I ran out of room for the summary."
    ),
}


@pytest.mark.parametrize("text", FALLBACKS.values(), ids=FALLBACKS.keys())
def test_unusable_replies_fall_back_to_the_raw_text(text: str) -> None:
    assert StructuredSummary.parse(text) is None
    kept, structured = apply_structured(text)
    assert kept == text
    assert structured is None


def test_a_summary_quoting_the_analysis_terminator_is_still_found() -> None:
    text = (
        "<analysis>\nThe session edited the compaction prompt itself.\n</analysis>\n```json\n"
        '{"user_intent": ["Rework the scratchpad prompt"], "files": [{"path": '
        '"prompts/compaction.md", "summary": "Tightened the <analysis>...</analysis> rules"}]}'
        "\n```"
    )
    summary = StructuredSummary.parse(text)
    assert summary is not None
    assert summary.user_intent == ("Rework the scratchpad prompt",)
    assert summary.files[0].summary == "Tightened the <analysis>...</analysis> rules"


def test_fences_quoted_inside_string_values_do_not_break_extraction() -> None:
    text = (
        '```json\n{"user_intent": ["Document the config"], "files": [{"path": "docs/c.md", '
        '"summary": "Added examples", "key_code": "```json\\n{\\"retries\\": 3}\\n```"}]}\n```'
    )
    summary = StructuredSummary.parse(text)
    assert summary is not None
    assert summary.files[0].key_code == '```json\n{"retries": 3}\n```'


def test_a_bare_object_after_the_scratchpad_is_used_when_no_fence_parses() -> None:
    text = (
        "<analysis>the prompt says to emit ```json with {braces</analysis>\n"
        '{"user_intent": ["Real goal"]}'
    )
    summary = StructuredSummary.parse(text)
    assert summary is not None and summary.user_intent == ("Real goal",)


def test_the_last_fenced_block_wins() -> None:
    text = (
        '</analysis>\n```json\n{"user_intent": ["first"]}\n```\n'
        '```json\n{"user_intent": ["second"]}\n```'
    )
    assert json_candidates(text)[0] == '{"user_intent": ["second"]}'
    summary = StructuredSummary.parse(text)
    assert summary is not None and summary.user_intent == ("second",)


def test_an_empty_last_block_falls_through_to_an_earlier_one() -> None:
    text = '</analysis>\n```json\n{"user_intent": ["real"]}\n```\n```json\n{}\n```'
    summary = StructuredSummary.parse(text)
    assert summary is not None and summary.user_intent == ("real",)


def test_a_last_block_that_is_not_valid_json_falls_through_to_an_earlier_one() -> None:
    text = (
        '</analysis>\n```json\n{"user_intent": ["real"]}\n```\n'
        '```json\n{"user_intent": ["cut",]}\n```'
    )
    summary = StructuredSummary.parse(text)
    assert summary is not None and summary.user_intent == ("real",)


# -- rendering ---------------------------------------------------------------------------------


def test_rendered_sections_in_order() -> None:
    summary = StructuredSummary.parse(FULL_REPLY)
    assert summary is not None
    rendered = summary.render()
    headings = [line for line in rendered.splitlines() if line.startswith("#")]
    assert headings == [
        "# Conversation Summary",
        "## User Intent",
        "## Technical Concepts",
        "## Files + Code",
        "### src/parser.py",
        "## Errors + Fixes",
        "## Problem Solving",
        "## User Messages",
        "## Pending Tasks",
        "## Current Work",
        "## Next Step",
    ]
    assert "- Fix the parser bug\n- Add a regression test\n" in rendered
    assert "```\ndef scan(self): ...\n```" in rendered
    assert rendered.endswith("## Next Step\nFinish the regression test")


def test_empty_sections_are_left_out() -> None:
    rendered = StructuredSummary(pending_tasks=("Ship it",)).render()
    assert rendered == "# Conversation Summary\n\n## Pending Tasks\n- Ship it"


def test_key_code_with_long_backtick_runs_gets_a_longer_fence() -> None:
    summary = StructuredSummary(
        files=(
            FileActivity(
                "docs/build.md",
                "Documented the build",
                "```bash\nmake build\n```\n````\nnested fence docs\n````",
            ),
        ),
        errors_and_fixes=("None",),
    )
    rendered = summary.render()
    assert rendered.count("\n`````\n") == 2
    assert rendered.index("## Errors + Fixes") > rendered.rindex("\n`````\n")
    assert "### docs/build.md\nDocumented the build\n`````\n```bash" in rendered


def test_a_file_without_path_renders_its_summary_only() -> None:
    rendered = StructuredSummary(files=(FileActivity("", "Scratch notes"),)).render()
    assert "###" not in rendered
    assert "## Files + Code\nScratch notes" in rendered


def _override(name: str, text: str) -> Path:
    directory = _opt_in()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_user_override_template_is_used_and_sees_extra_fields() -> None:
    _override(
        "compaction_summary.md",
        "Goal: {{ user_intent | join(', ') }} / mood: {{ extra.mood }}",
    )
    kept, structured = apply_structured('{"user_intent": ["a", "b"], "mood": "calm"}')
    assert structured is not None
    assert kept == "Goal: a, b / mood: calm"


def test_a_broken_override_keeps_the_raw_text_and_logs_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    _override("compaction_summary.md", "{{ no_such_field }}")
    with caplog.at_level(logging.WARNING, logger="gosling.context_mgmt.structured"):
        kept, structured = apply_structured(FULL_REPLY)
    assert kept == FULL_REPLY and structured is None
    assert "no_such_field" in caplog.text


def test_an_override_that_renders_empty_keeps_the_raw_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    _override("compaction_summary.md", "{# nothing #}\n   ")
    with caplog.at_level(logging.WARNING, logger="gosling.context_mgmt.structured"):
        kept, structured = apply_structured(FULL_REPLY)
    assert kept == FULL_REPLY and structured is None
    assert "rendered empty" in caplog.text


def test_a_prose_reply_with_a_trail_and_a_broken_override_keeps_the_prose(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from gosling.context_mgmt.artifact_trail import ArtifactTrail

    _override("compaction_summary.md", "{{ no_such_field }}")
    prose = "We rewrote the lexer; the tests pass."
    with caplog.at_level(logging.WARNING, logger="gosling.context_mgmt.structured"):
        kept, structured = apply_structured(prose, trail=ArtifactTrail(errors=("E: boom",)))
    assert kept == prose and structured is None
    assert "artifact trail" in caplog.text and "no_such_field" in caplog.text


def test_an_empty_key_before_a_brace_inside_a_string_keeps_the_object_whole() -> None:
    from gosling.context_mgmt.structured import leading_object

    assert leading_object('{"": "}", "a": 1} trailing') == '{"": "}", "a": 1}'


def test_an_escaped_quote_does_not_end_a_string_that_holds_a_brace() -> None:
    from gosling.context_mgmt.structured import leading_object

    document = '{"key_code": "print(\\"}\\")", "a": 1}'
    assert leading_object(document + " and then prose }") == document


def test_distinct_candidates_are_all_kept_whatever_their_order() -> None:
    text = '</analysis>\n```json\n{"x": "b"}\n```\n```json\n{"x": "a"}\n```'
    assert json_candidates(text) == ['{"x": "a"}', '{"x": "b"}']
