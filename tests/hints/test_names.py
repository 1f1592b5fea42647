from __future__ import annotations

import pytest

from gosling.hints import DEFAULT_FILENAMES, ENV_VAR, resolve_filenames


def test_defaults_are_goosehints_then_agents_md_as_in_goose() -> None:
    assert resolve_filenames() == (".goosehints", "AGENTS.md")
    assert resolve_filenames() == DEFAULT_FILENAMES


def test_env_accepts_a_json_array(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, '[".goosehints", "CLAUDE.md"]')
    assert resolve_filenames() == (".goosehints", "CLAUDE.md")


def test_env_accepts_a_comma_separated_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, " CLAUDE.md , AGENTS.md,")
    assert resolve_filenames() == ("CLAUDE.md", "AGENTS.md")


def test_explicit_names_beat_the_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "CLAUDE.md")
    assert resolve_filenames(["GEMINI.md"]) == ("GEMINI.md",)


def test_an_empty_json_array_turns_hints_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "[]")
    assert resolve_filenames() == ()


def test_broken_json_names_the_variable_and_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, '["AGENTS.md"')
    with pytest.raises(ValueError, match=ENV_VAR) as caught:
        resolve_filenames()
    assert "AGENTS.md,.goosehints" in str(caught.value)


def test_json_that_is_not_a_list_of_strings_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, '["AGENTS.md", 3]')
    with pytest.raises(ValueError, match="list of file names"):
        resolve_filenames()


@pytest.mark.parametrize("name", ["docs/AGENTS.md", "..", "", "  "])
def test_names_must_be_plain_file_names(name: str) -> None:
    with pytest.raises(ValueError, match="hint file name"):
        resolve_filenames([name])


def test_a_bare_string_is_not_mistaken_for_a_list_of_letters() -> None:
    with pytest.raises(ValueError, match="list of names"):
        resolve_filenames("AGENTS.md")
