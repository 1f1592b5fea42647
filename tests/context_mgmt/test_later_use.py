"""Hidden-then-used: what the model took from an earlier tool output, and whether a strategy
had hidden that output when the model used it. Counts below are worked out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from gosling.context_mgmt.later_use import (
    LaterUse,
    count_hidden_uses,
    distinctive_tokens,
    find_later_uses,
    hidden_by_call,
    hidden_tool_outputs,
    tool_outputs,
)
from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse

SYSTEM = "You are a coding agent. Record user-visible changes in CHANGELOG.md."


def shell(call_id: str, command: str, text: str = "") -> Message:
    request = ToolRequest(id=call_id, name="shell", arguments={"command": command})
    return Message.assistant(text, request) if text else Message.assistant(None, request)


def output(call_id: str, text: str) -> Message:
    return Message.user(None, ToolResponse(id=call_id, content=(TextContent(text=text),)))


TRANSCRIPT = [
    Message.user("Fix the failing test in the parser module."),  # 0
    shell("c1", "pytest -q", "Let me run the tests."),  # 1
    output(
        "c1",
        "FAILED tests/test_parser.py::test_nested - AssertionError: expected 42017 got 42071\n"
        "1 failed, 12 passed in 0.84s; see CHANGELOG.md",
    ),  # 2
    shell("c2", "grep -rn parse_block src/"),  # 3
    output(
        "c2",
        "src/parser/core.py:88: def parse_block(tokens, depth):\n"
        "src/parser/legacy.py:12: from .core import parse_block",
    ),  # 4
    Message.assistant(
        "The failure in test_nested comes from src/parser/core.py; CHANGELOG.md needs a line.",
        ToolRequest(id="c3", name="read", arguments={"path": "src/parser/core.py"}),
    ),  # 5
    output("c3", "def parse_block(tokens, depth):\n    limit = MAX_DEPTH_2048\n"),  # 6
    shell("c4", "grep -rn MAX_DEPTH_2048 src/ tests/", "Where else is test_nested's limit set?"),
    output(
        "c4",
        "src/parser/core.py:3: MAX_DEPTH_2048 = 64\n"
        "tests/test_parser.py:40: build_tree_fixture(depth=70)",
    ),  # 8
    Message.assistant("build_tree_fixture uses depth 70 in test_parser.py, over the limit."),
    Message.user("Please also look at src/parser/legacy.py"),  # 10
    Message.assistant("Looking at src/parser/legacy.py now."),  # 11
]


def test_distinctive_tokens_follow_the_documented_rules() -> None:
    text = "see ./src/app.py. and parser, abc12, 1234567, max_len, 0.84s, v1.2.3-rc1/ ok"
    assert distinctive_tokens(text) == {
        "src/app.py", "app.py", "1234567", "max_len", "v1.2.3-rc1",
    }  # fmt: skip


def test_uses_in_a_crafted_transcript() -> None:
    uses = find_later_uses(TRANSCRIPT, SYSTEM)
    assert uses == [
        # message 5: test_nested from pytest's output, the file path (and its name) from grep;
        # CHANGELOG.md is in the system prompt, so it proves nothing
        LaterUse("c1", 2, 5, "test_nested"),
        LaterUse("c2", 4, 5, "core.py"),
        LaterUse("c2", 4, 5, "src/parser/core.py"),
        # message 7: the constant read in c3 (test_nested was already the model's own word)
        LaterUse("c3", 6, 7, "MAX_DEPTH_2048"),
        # message 9: the fixture from c4; test_parser.py is in two outputs (c1, c4): ambiguous
        LaterUse("c4", 8, 9, "build_tree_fixture"),
        # message 11 repeats a path the user had just written: not a use
    ]


def test_hidden_uses_are_counted_once_per_output_and_message() -> None:
    uses = find_later_uses(TRANSCRIPT, SYSTEM)
    hidden_at = {5: {"c1"}, 7: {"c1", "c2", "c3"}, 9: {"c1", "c2"}}
    count = count_hidden_uses(uses, hidden_at)
    assert (count.uses, count.hidden) == (4, 2)
    assert count.hidden_pairs == (("c1", 5), ("c3", 7))
    assert count.hidden_share == pytest.approx(0.5)
    assert count_hidden_uses(uses, {}).hidden == 0


def test_a_masked_or_dropped_output_counts_as_hidden() -> None:
    outputs = tool_outputs(TRANSCRIPT[:7])
    view = list(TRANSCRIPT[:7])
    view[2] = output("c1", "[output of c1 hidden; context__recall('c1') shows it]")
    del view[3:5]  # c2's pair folded into a summary
    assert hidden_tool_outputs(view, outputs) == {"c1", "c2"}
    assert hidden_tool_outputs(TRANSCRIPT[:7], outputs) == set()


def test_views_sent_per_call_feed_the_count() -> None:
    masked_c1 = output("c1", "[output of c1 hidden; context__recall('c1') shows it]")
    calls = [
        (5, TRANSCRIPT[:5]),  # everything whole
        (7, [*TRANSCRIPT[:2], masked_c1, *TRANSCRIPT[3:7]]),  # c1 masked
        (9, [TRANSCRIPT[0], *TRANSCRIPT[5:9]]),  # c1 and c2 compacted away
    ]
    hidden = hidden_by_call(TRANSCRIPT, calls)
    assert hidden == {5: set(), 7: {"c1"}, 9: {"c1", "c2"}}
    # c3's constant (used at 7) and c4's fixture (used at 9) were both in view
    assert count_hidden_uses(find_later_uses(TRANSCRIPT, SYSTEM), hidden).hidden == 0
    calls[2] = (9, [TRANSCRIPT[0], *TRANSCRIPT[5:8]])  # c4's output not sent yet: 9 cannot see it
    late = hidden_by_call(TRANSCRIPT, calls)
    assert count_hidden_uses(find_later_uses(TRANSCRIPT, SYSTEM), late).hidden_pairs == (("c4", 9),)


CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "transcripts"


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the transcript corpus is not at {CORPUS}")
def test_every_use_found_in_a_real_transcript_is_in_its_output_and_its_message() -> None:
    from gosling.sessions.importers import load_transcripts

    transcript = load_transcripts(
        CORPUS / "minisweagent_marshmallow-1343_deepseek-reasoner.traj.json"
    )[0]
    messages = transcript.messages
    uses = find_later_uses(messages, transcript.system_prompt)
    assert len(uses) >= 10
    outputs = tool_outputs(messages)
    for use in uses:
        assert use.token in outputs[use.tool_call_id]
        assert use.output_index < use.message_index
        assert messages[use.message_index].role == "assistant"
