from __future__ import annotations

import pytest

from gosling.hints import DEFAULT_FILENAMES, resolve_filenames


def test_defaults_are_goosehints_then_agents_md_as_in_goose() -> None:
    assert resolve_filenames() == (".goosehints", "AGENTS.md")
    assert resolve_filenames() == DEFAULT_FILENAMES


def test_the_environment_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The library reads no variable; the command line's setting covers the variable."""
    monkeypatch.setenv("GOSLING_CONTEXT_FILE_NAMES", '["CLAUDE.md"]')
    assert resolve_filenames() == DEFAULT_FILENAMES
    assert resolve_filenames(["GEMINI.md"]) == ("GEMINI.md",)


def test_an_empty_list_turns_hints_off() -> None:
    assert resolve_filenames([]) == ()


@pytest.mark.parametrize("name", ["docs/AGENTS.md", "..", "", "  "])
def test_names_must_be_plain_file_names(name: str) -> None:
    with pytest.raises(ValueError, match="hint file name"):
        resolve_filenames([name])


def test_a_bare_string_is_not_mistaken_for_a_list_of_letters() -> None:
    with pytest.raises(ValueError, match="list of names"):
        resolve_filenames("AGENTS.md")
