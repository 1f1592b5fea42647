"""The artifact trail (issue 27 item 4): built from the session's own tool events, checked
against two real transcripts of the corpus by hand, rendered with every summary, merged into
its files, bounded with the oldest entries folded."""

from __future__ import annotations

import json
from pathlib import Path

from gosling.context_mgmt import summarize
from gosling.context_mgmt.artifact_trail import ArtifactTrail, CommandRun, build_trail
from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse
from gosling.providers import ScriptedProvider
from gosling.sessions.importers.dispatch import load_transcripts

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "transcripts"
RUST_PORT = CORPUS / "claudecode_claude-reliability_python-to-rust-port.jsonl"
PONYC = CORPUS / "openhands_multi-swe-bench_ponyc_output.jsonl"


def test_the_trail_of_a_claude_code_session_matches_its_tool_calls() -> None:
    """Checked by hand against the JSONL: one Edit of Cargo.toml (6 lines → 9), Writes of
    lib.rs and Justfile over files the session had read ("has been updated"), five new
    modules ("File created successfully", 38/90/116/80/96 lines), 16 Bash calls, none
    flagged as an error."""
    trail = build_trail(load_transcripts(RUST_PORT)[0].messages)
    root = "/tmp/tmpqwh7888i/"
    assert [(f.path.removeprefix(root), f.activity) for f in trail.files] == [
        ("Cargo.toml", "read; edited (+9/−6 lines)"),
        ("src/lib.rs", "read; rewritten (+10/−0 lines)"),
        ("src/string_utils.rs", "created (+38/−0 lines)"),
        ("src/math_utils.rs", "created (+90/−0 lines)"),
        ("src/list_utils.rs", "created (+116/−0 lines)"),
        ("src/dict_utils.rs", "created (+80/−0 lines)"),
        ("src/validation.rs", "created (+96/−0 lines)"),
        ("Justfile", "read; rewritten (+15/−0 lines)"),
    ]
    assert len(trail.commands) == 16 and all(c.exit_code == 0 for c in trail.commands)
    assert trail.commands[:2] == (
        CommandRun("cargo init --lib --name python_utils", 0),
        CommandRun("cargo test 2>&1", 0),
    )
    assert trail.commands[-1] == CommandRun("git status", 0)
    assert trail.errors == ()


def test_the_trail_of_an_openhands_run_has_its_exit_codes_and_errors() -> None:
    """Checked by hand against the run's observations (`extras.metadata.exit_code` and the
    first line of each failing command's output)."""
    trail = build_trail(load_transcripts(PONYC)[0].messages)
    (parser,) = trail.files
    assert parser.path == "/workspace/ponylang__ponyc__0.1/src/libponyc/ast/parser.c"
    assert parser.activity == "read 6×; edited 2× (+12/−10 lines)"  # two 5 → 6 line edits
    assert [c.exit_code for c in trail.commands] == [0] * 7 + [127, 2, 2, 127, 0, 127]
    assert trail.commands[8].command == "cd /workspace/ponylang__ponyc__0.1 && make"
    assert trail.errors == (
        "bash: ponyc: command not found",
        "/bin/sh: 1: cd: can't cd to /workspace/ponylang__ponyc__0.1/build/build_release",
        "bash: ./ponylang__ponyc__0.1/ponyc: No such file or directory",
        "bash: /workspace/ponylang__ponyc__0.1/build/bin/ponyc: No such file or directory",
    )


def _shell(call_id: str, command: str, output: str, *, error: bool = False) -> list[Message]:
    request = ToolRequest(id=call_id, name="developer__shell", arguments={"command": command})
    response = ToolResponse(id=call_id, content=(TextContent(text=output),), is_error=error)
    return [
        Message(role="assistant", content=(request,)),
        Message(role="user", content=(response,)),
    ]


def _parser_created() -> list[Message]:
    """The task, then `src/parser.py` written with two lines."""
    write = ToolRequest(
        id="w", name="developer__write", arguments={"path": "src/parser.py", "content": "a\nb\n"}
    )
    created = ToolResponse(id="w", content=(TextContent(text="Created src/parser.py"),))
    return [
        Message.user("Fix the parser bug"),
        Message(role="assistant", content=(write,)),
        Message(role="user", content=(created,)),
    ]


def test_a_test_command_that_failed_then_passed_is_recorded_with_its_failing_tests() -> None:
    failing = "Exit code: 1\nFAILED tests/test_dates.py::test_month - ValueError: month 13\n"
    messages = [
        Message.user("fix the dates"),
        *_shell("a", "pytest -x tests 2>&1 | tail -20", failing),
        *_shell("b", "pytest -x tests", "Exit code: 0\n3 passed"),
        *_shell("c", "npm test", "Exit code: 0\nok"),  # never failed: not a fix
    ]
    (fix,) = build_trail(messages).tests_fixed
    assert (fix.command, fix.failed_runs, fix.tests) == (
        "pytest -x tests",
        1,
        ("tests/test_dates.py::test_month",),
    )


def test_the_trail_is_bounded_with_the_oldest_entries_folded() -> None:
    messages = [Message.user("go")]
    for i in range(30):
        messages += _shell(f"c{i}", f"step {i:02}", f"Exit code: {i % 3}\nOSError: disk {i:02}")
    bounded = build_trail(messages).bounded(max_commands=5, max_errors=3)
    assert [c.command for c in bounded.commands] == [f"step {i}" for i in range(25, 30)]
    assert (bounded.folded_commands, bounded.folded_failed_commands) == (25, 16)
    assert bounded.errors == ("OSError: disk 26", "OSError: disk 28", "OSError: disk 29")
    assert bounded.folded_errors == 17


async def test_every_summary_carries_the_trail_and_its_files_merge_into_files() -> None:
    messages = [
        *_parser_created(),
        *_shell("t", "pytest", "Exit code: 2\nE   ImportError: cannot import name 'scan'"),
    ]
    document = {
        "user_intent": ["Fix the parser bug"],
        "files": [{"path": "src/parser.py", "summary": "The model's own words"}],
    }
    reply = "```json\n" + json.dumps(document) + "\n```"
    summary = await summarize(ScriptedProvider([reply]), messages)
    text = summary.message.text
    assert "### src/parser.py\n*Recorded: created (+2/−0 lines)*\nThe model's own words" in text
    assert "Commands:\n- `pytest` → exit 2" in text
    assert "Errors seen (first lines):\n- E   ImportError: cannot import name 'scan'" in text
    assert summary.structured is not None
    (merged,) = summary.structured.files
    assert merged.activity == "created (+2/−0 lines)"
    assert isinstance(summary.trail, ArtifactTrail)


async def test_a_model_cannot_forge_the_recorded_activity() -> None:
    document = {"files": [{"path": "x.py", "activity": "edited 99×"}]}
    summary = await summarize(
        ScriptedProvider(["```json\n" + json.dumps(document) + "\n```"]), [Message.user("hi")]
    )
    assert "Recorded" not in summary.message.text


def test_a_trail_holding_only_one_kind_of_entry_is_still_rendered() -> None:
    """A trail a library caller builds by hand: what it holds reaches the template."""
    from gosling.context_mgmt.artifact_trail import FileTouch, TestFix
    from gosling.context_mgmt.structured import StructuredSummary

    fixed = ArtifactTrail(tests_fixed=(TestFix("pytest", 1, ("tests/test_a.py::test_b",)),))
    context = StructuredSummary().template_context(fixed)
    assert context["trail"] is not None
    assert context["trail"]["tests_fixed"][0]["command"] == "pytest"
    assert StructuredSummary().template_context(ArtifactTrail(folded_files=3))["trail"]
    assert StructuredSummary().template_context(ArtifactTrail(errors=("E: boom",)))["trail"]
    ran = ArtifactTrail(commands=(CommandRun("make", 0),))
    assert StructuredSummary().template_context(ran)["trail"]
    assert StructuredSummary().template_context(ArtifactTrail())["trail"] is None
    # Files alone are in the summary's own `files` already, unless the trail is all there is.
    files = ArtifactTrail(files=(FileTouch("src/a.py", reads=1),))
    assert StructuredSummary().template_context(files)["trail"] is None
    assert StructuredSummary().template_context(files, trail_only=True)["trail"]


async def test_a_file_the_model_names_by_its_absolute_path_gets_what_was_recorded_for_it() -> None:
    messages = _parser_created()
    document = {"files": [{"path": "/home/dev/proj/src/parser.py", "summary": "Rewritten"}]}
    reply = "```json\n" + json.dumps(document) + "\n```"
    summary = await summarize(ScriptedProvider([reply]), messages)
    assert summary.structured is not None
    (merged,) = summary.structured.files
    assert merged.path == "/home/dev/proj/src/parser.py"
    assert merged.activity == "created (+2/−0 lines)"


def test_files_the_model_left_out_are_added_changed_ones_first() -> None:
    from gosling.context_mgmt.artifact_trail import FileTouch
    from gosling.context_mgmt.structured import StructuredSummary

    trail = ArtifactTrail(
        files=(FileTouch("docs/readme.md", reads=1), FileTouch("src/a.py", writes=1))
    )
    merged = StructuredSummary().with_trail(trail)
    assert [f.path for f in merged.files] == ["src/a.py", "docs/readme.md"]
