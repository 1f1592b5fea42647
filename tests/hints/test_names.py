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


@pytest.mark.parametrize(
    "name",
    [".goosehints", "AGENTS.md", "CLAUDE.md", "CONVENTIONS.md", "rules.mdc", "GUIDE.markdown"],
)
def test_an_untrusted_project_may_choose_hint_file_names(name: str) -> None:
    from gosling.hints.names import untrusted_name_problem

    assert untrusted_name_problem(name) is None


@pytest.mark.parametrize(
    "name, why",
    [
        (".env", "dotfile"),
        (".npmrc", "dotfile"),
        (".cursorrules", "dotfile"),
        ("config.toml", "Markdown"),
        ("settings.json", "Markdown"),
        ("id_rsa", "Markdown"),
        ("secrets.md", "secrets"),
        ("TOKENS.md", "secrets"),
        ("docs/AGENTS.md", "path"),
        ("..", "path"),
        (".md", "dotfile"),
    ],
)
def test_an_untrusted_project_may_not_choose_other_files(name: str, why: str) -> None:
    from gosling.hints.names import untrusted_name_problem

    problem = untrusted_name_problem(name)
    assert problem is not None and why in problem
