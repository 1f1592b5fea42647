"""Prompt templates: rendering rules, user overrides, clear errors and `code_fence`."""

from __future__ import annotations

from pathlib import Path

import pytest

from gosling.agent.user_inputs import use_user_prompts
from gosling.prompts import PromptError, code_fence, override_dir, render


def _opt_in() -> Path:
    """The user's prompt override dir, opted into as the command line does."""
    use_user_prompts()
    directory = override_dir()
    assert directory is not None
    return directory


@pytest.fixture
def builtin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "builtin"
    directory.mkdir()
    import gosling.prompts.templating as module

    monkeypatch.setattr(module, "BUILTIN_DIR", directory)
    return directory


def test_render_trims_blocks_and_result(builtin_dir: Path) -> None:
    (builtin_dir / "greet.md").write_text("\n{% if name %}\nHello {{ name }}!\n{% endif %}\n\n")
    assert render("greet.md", name="Ada") == "Hello Ada!"
    assert render("greet", name="Ada") == "Hello Ada!"


def test_missing_variable_names_the_file(builtin_dir: Path) -> None:
    (builtin_dir / "greet.md").write_text("Hello {{ name }}")
    with pytest.raises(PromptError, match=r"greet\.md.*'name' is undefined"):
        render("greet.md")


def test_user_override_wins_per_file(builtin_dir: Path) -> None:
    (builtin_dir / "a.md").write_text("built-in a")
    (builtin_dir / "b.md").write_text("built-in b")
    override = _opt_in()
    override.mkdir(parents=True)
    (override / "a.md").write_text("custom a {{ x }}")
    assert render("a.md", x=1) == "custom a 1"
    assert render("b.md") == "built-in b"


def test_broken_override_is_a_clear_error(builtin_dir: Path) -> None:
    (builtin_dir / "a.md").write_text("fine")
    override = _opt_in()
    override.mkdir(parents=True)
    (override / "a.md").write_text("line one\n{% if x %}\nunclosed")
    with pytest.raises(PromptError) as info:
        render("a.md", x=True)
    assert str(override / "a.md") in str(info.value)
    assert "line" in str(info.value)


def test_unknown_template() -> None:
    with pytest.raises(PromptError, match=r"no prompt template named 'nope\.md'"):
        render("nope")


def test_code_fence_outgrows_the_longest_backtick_run() -> None:
    assert code_fence("x = 1\n") == "```\nx = 1\n```"
    key_code = "a = '```'\nb = '````'"
    fenced = code_fence(key_code)
    assert fenced.startswith("`````\n") and fenced.endswith("\n`````")
    assert fenced.count("`````") == 2


def test_code_fence_filter_is_available(builtin_dir: Path) -> None:
    (builtin_dir / "f.md").write_text("{{ code | code_fence }}")
    assert render("f.md", code="``x``") == "```\n``x``\n```"
