"""Damaged copies of real transcripts: truncated, with values of the wrong type, nested absurdly
deep. Whatever the damage, importing either works or raises `ImportFailed` naming the file, in
`gosling sessions import` and in `gosling context replay` alike."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gosling.agent.cli.main import cli
from gosling.conversation import Message, ToolRequest
from gosling.sessions import ImportFailed, SessionSnapshot, SqliteSessionStore
from gosling.sessions.importers import parse_transcripts, to_snapshot
from gosling.sessions.jsonl import dump_jsonl

FIXTURES = Path(__file__).with_name("fixtures")


def _gosling_export() -> str:
    messages = [
        Message.user("hello"),
        Message.assistant("looking", ToolRequest(id="c1", name="shell", arguments={"a": [1]})),
    ]
    return dump_jsonl(
        SessionSnapshot(id="s1", name="fuzz", working_dir=Path("/w"), messages=messages)
    )


SAMPLES = {
    **{path.name: path.read_text(encoding="utf-8") for path in sorted(FIXTURES.iterdir())},
    "gosling.jsonl": _gosling_export(),
}
SWAPS: list[Any] = [{}, [], 0, 2.5, "x", None, True, {"type": {}}, [[]]]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*path, index))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replace(value[path[0]], path[1:], new)
    return copy


@st.composite
def swapped(draw: st.DrawFn, text: str) -> str:
    """One JSON value (in the whole document, or in one line of JSON Lines) swapped for a value
    of another type, or for a deep nest of lists."""
    new = draw(st.sampled_from([*SWAPS, "deep"]))
    if new == "deep":
        new = json.loads("[" * 60 + "]" * 60)
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        lines = text.splitlines()
        index = draw(st.integers(0, len(lines) - 1))
        try:
            value = json.loads(lines[index])
        except (ValueError, RecursionError):
            return text
        path = draw(st.sampled_from(list(_paths(value))))
        lines[index] = json.dumps(_replace(value, path, new))
        return "\n".join(lines)
    path = draw(st.sampled_from(list(_paths(document))))
    return json.dumps(_replace(document, path, new))


@st.composite
def damaged(draw: st.DrawFn) -> tuple[str, str]:
    name = draw(st.sampled_from(sorted(SAMPLES)))
    text = SAMPLES[name]
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["truncate", "swap", "nest"]))
        if how == "truncate":
            text = text[: draw(st.integers(0, len(text)))]
        elif how == "swap" and text.strip():
            text = draw(swapped(text))
        elif how == "nest":
            at = draw(st.integers(0, len(text)))
            depth = draw(st.sampled_from([3, 200, 5_000, 100_000]))
            text = text[:at] + "[" * depth + text[at:]
    return name, text


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteSessionStore]:
    with SqliteSessionStore(tmp_path_factory.mktemp("fuzz") / "sessions.db") as opened:
        yield opened


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_damaged_transcripts_import_or_fail_cleanly(
    store: SqliteSessionStore, sample: tuple[str, str]
) -> None:
    name, text = sample
    try:
        transcripts = parse_transcripts(text, source=name)
    except ImportFailed as exc:
        assert name in str(exc)
        return
    for transcript in transcripts:
        store.restore(to_snapshot(transcript))


HOSTILE = {
    "type-dict.jsonl": SAMPLES["gosling.jsonl"].splitlines()[0] + '\n{"type":{}}\n',
    "nested.jsonl": SAMPLES["gosling.jsonl"].splitlines()[0] + "\n" + "[" * 100_000 + "\n",
    "nested.json": "[" * 100_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("command", [["sessions", "import"], ["context", "replay"]])
def test_hostile_files_are_one_line_errors(tmp_path: Path, name: str, command: list[str]) -> None:
    path = tmp_path / name
    path.write_text(HOSTILE[name])
    result = CliRunner().invoke(cli, [*command, str(path)])
    assert result.exit_code == 2, result.output  # bad input, as the README says
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert str(path) in result.output
    if name.endswith(".jsonl") and name != "nested.json":
        assert "line 2" in result.output
