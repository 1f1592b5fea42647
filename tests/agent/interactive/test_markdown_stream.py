"""Streamed markdown: finished blocks print once, only the open block is redrawn."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gosling.agent.cli.interactive.markdown_stream import MarkdownStream, stable_prefix

WINDOW = 4


def render(text: str) -> list[str]:
    """A stand-in renderer: one rendered line per source line."""
    return text.rstrip("\n").split("\n")


def stream(window: int = WINDOW) -> MarkdownStream[str]:
    return MarkdownStream(render, window=window, blank="", is_blank=lambda line: not line.strip())


@pytest.mark.parametrize(
    ("text", "stable"),
    [
        ("one paragraph still going", ""),
        ("para one\n\n", ""),
        ("para one\n\npara t", "para one\n\n"),
        ("para one\n\n  indented continuation", ""),
        ("```py\nx = 1\n\ny = 2\n", ""),
        ("```py\nx = 1\n\ny = 2\n```\nafter", "```py\nx = 1\n\ny = 2\n```\n"),
        ("a\n\nb\n\n```\ncode\n\n", "a\n\nb\n\n"),
        ("a\n\nb\n\n```\ncode\n```\n\nc", "a\n\nb\n\n```\ncode\n```\n\n"),
        ("~~~\nx\n\n~~~\n\nnext", "~~~\nx\n\n~~~\n\n"),
    ],
)
def test_a_block_is_finished_only_when_the_next_one_has_started(text: str, stable: str) -> None:
    assert text[: stable_prefix(text)] == stable


def test_finished_paragraphs_print_once_and_the_open_one_stays_live() -> None:
    md = stream()
    md.feed("First paragraph.\n\nSecond")
    assert md.refresh() == ["First paragraph."]
    assert md.live == ["", "Second"]
    md.feed(" paragraph, growing.")
    assert md.refresh() == []
    assert md.live == ["", "Second paragraph, growing."]
    assert md.finish() == ["", "Second paragraph, growing."]
    assert md.live == [] and md.text == ""


def test_a_long_open_block_scrolls_out_through_the_window() -> None:
    md = stream(window=3)
    md.feed("```\n" + "".join(f"line {i}\n" for i in range(10)))
    printed = md.refresh()
    assert len(md.live) == 3
    assert printed + md.live == render("```\n" + "".join(f"line {i}\n" for i in range(10)))
    md.feed("```\n")
    assert printed + md.finish() == render(
        "```\n" + "".join(f"line {i}\n" for i in range(10)) + "```"
    )


paragraph = st.lists(
    st.text(alphabet="abc *_`", min_size=1, max_size=12).filter(
        lambda s: not s[0].isspace() and not s.startswith("```")
    ),
    min_size=1,
    max_size=3,
).map(lambda lines: "\n".join(lines))
code = st.lists(st.sampled_from(["x = 1", "", "  y", "z"]), max_size=4).map(
    lambda lines: "```\n" + "\n".join(lines) + "\n```"
)
documents = st.lists(st.one_of(paragraph, code), min_size=1, max_size=5).map("\n\n".join)


@given(documents, st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=30))
def test_no_line_is_lost_or_repeated_however_the_text_is_chunked(
    document: str, sizes: list[int]
) -> None:
    md = stream()
    printed: list[str] = []
    position = 0
    for size in sizes * (len(document) // max(sum(sizes), 1) + 1):
        if position >= len(document):
            break
        md.feed(document[position : position + size])
        position += size
        printed += md.refresh()
        assert len(md.live) <= WINDOW + 1  # the open block plus its separator
    md.feed(document[position:])
    printed += md.finish()
    assert printed == render(document)
