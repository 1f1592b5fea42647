from __future__ import annotations

from gosling.hints.markdown import code_regions, inside


def _code(text: str) -> list[str]:
    return [text[start:end] for start, end in code_regions(text)]


def test_inline_spans_close_on_a_run_of_the_same_length() -> None:
    assert _code("a `x` b ``y ` z`` c ` d") == ["`x`", "``y ` z``"]


def test_inline_spans_may_cross_lines_but_not_paragraphs() -> None:
    assert _code("a `b\nc` d") == ["`b\nc`"]
    assert _code("a `b\n\nc` d") == []


def test_fences_need_the_same_character_at_least_as_long() -> None:
    text = "````md\n```\n~~~~\n`````\nafter `x`"
    assert _code(text) == ["````md\n```\n~~~~\n`````\n", "`x`"]


def test_a_line_indented_four_spaces_does_not_open_a_fence() -> None:
    assert _code("    ```\n@a.md\n") == []


def test_a_backtick_fence_cannot_have_backticks_in_its_info_string() -> None:
    assert _code("```a`\n@x\n") == []


def test_inside_checks_half_open_ranges() -> None:
    regions = code_regions("ab `cd` ef")
    assert [inside(regions, i) for i in range(10)] == [False] * 3 + [True] * 4 + [False] * 3
