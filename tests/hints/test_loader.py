from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from gosling.agent.user_inputs import user_hint_dirs
from gosling.hints import (
    HintHeaders,
    RefusalReason,
    SubdirectoryHintTracker,
    collect_hints,
    find_git_root,
    load_hint_files,
)
from gosling.hints.headers import DEFAULT_HEADERS
from tests.hints.trees import write

GLOBAL_HEADER = DEFAULT_HEADERS.global_header()
PROJECT_HEADER = DEFAULT_HEADERS.project_header()


def test_nothing_to_load_gives_empty_text(repo: Path, global_dir: Path) -> None:
    assert load_hint_files(repo, global_dir=global_dir) == ""


def test_git_root_is_the_nearest_ancestor_with_git_dir_or_file(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / ".git").mkdir(parents=True)
    inner = outer / "vendor" / "lib"
    write(inner / ".git", "gitdir: ../../.git/modules/lib\n")
    deep = inner / "src" / "pkg"
    deep.mkdir(parents=True)
    assert find_git_root(deep) == inner
    assert find_git_root(outer / "vendor") == outer
    assert find_git_root(tmp_path) is None


def test_project_hints_go_from_git_root_down_to_working_dir(repo: Path, global_dir: Path) -> None:
    write(repo / "AGENTS.md", "root rules")
    write(repo / "a" / "AGENTS.md", "a rules")
    write(repo / "a" / "b" / ".goosehints", "b goosehints")
    write(repo / "a" / "b" / "AGENTS.md", "b rules")
    write(repo / "a" / "sibling" / "AGENTS.md", "sibling rules")
    write(repo / "a" / "b" / "c" / "AGENTS.md", "below the working dir")

    text = load_hint_files(repo / "a" / "b", global_dir=global_dir)

    order = [text.index(s) for s in ("root rules", "a rules", "b goosehints", "b rules")]
    assert order == sorted(order)
    assert "sibling rules" not in text
    assert "below the working dir" not in text
    assert text.startswith(PROJECT_HEADER)


def test_configured_name_order_is_kept_within_a_directory(repo: Path, global_dir: Path) -> None:
    write(repo / "AGENTS.md", "agents")
    write(repo / ".goosehints", "goosehints")
    text = load_hint_files(repo, [".goosehints", "AGENTS.md"], global_dir=global_dir)
    assert text.index("goosehints") < text.index("agents")
    only = load_hint_files(repo, ["AGENTS.md"], global_dir=global_dir)
    assert "goosehints" not in only


def test_by_default_goosehints_comes_before_agents_md(repo: Path, global_dir: Path) -> None:
    write(repo / "AGENTS.md", "agents")
    write(repo / ".goosehints", "goosehints")
    write(global_dir / "AGENTS.md", "global agents")
    write(global_dir / ".goosehints", "global goosehints")
    text = load_hint_files(repo, global_dir=global_dir)
    assert text.index("global goosehints") < text.index("global agents")
    assert text.index("goosehints", text.index(PROJECT_HEADER)) < text.rindex("agents")
    assert text.endswith("goosehints\nagents")


def test_without_git_root_only_the_working_dir_counts(tmp_path: Path, global_dir: Path) -> None:
    write(tmp_path / "plain" / "AGENTS.md", "parent rules")
    write(tmp_path / "plain" / "sub" / "AGENTS.md", "sub rules")
    text = load_hint_files(tmp_path / "plain" / "sub", global_dir=global_dir)
    assert "sub rules" in text
    assert "parent rules" not in text


def test_global_hints_come_first_under_their_own_heading(repo: Path, global_dir: Path) -> None:
    write(global_dir / "AGENTS.md", "always use tabs")
    write(repo / "AGENTS.md", "use spaces here")
    text = load_hint_files(repo, global_dir=global_dir)
    assert text == GLOBAL_HEADER + "always use tabs" + "\n\n" + PROJECT_HEADER + "use spaces here"


def test_only_global_hints_gives_only_the_global_section(repo: Path, global_dir: Path) -> None:
    write(global_dir / ".goosehints", "global only")
    text = load_hint_files(repo, global_dir=global_dir)
    assert text == GLOBAL_HEADER + "global only"


def test_without_a_global_dir_the_config_dir_is_not_read(repo: Path) -> None:
    config = Path(os.environ["GOSLING_HOME"]) / "config"
    write(config / "AGENTS.md", "from the config dir")
    write(repo / "AGENTS.md", "project")
    assert load_hint_files(repo) == PROJECT_HEADER + "project"
    dirs = user_hint_dirs()  # what the command line passes
    assert dirs.global_dir == config
    assert "from the config dir" in load_hint_files(repo, global_dir=dirs.global_dir)


def test_agents_home_file_is_a_global_hint(repo: Path, global_dir: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home / ".agents" / "AGENTS.md", "shared by every agent tool, see @notes.md")
    write(home / ".agents" / "notes.md", "NOTES")
    write(home / "secret.md", "SECRET")
    write(global_dir / ".goosehints", "gosling global")
    write(repo / "AGENTS.md", "project")

    report = collect_hints(repo, global_dir=global_dir, home_dir=home)

    assert report.text.startswith(GLOBAL_HEADER + "gosling global\nshared by every agent tool")
    assert "--- Content from notes.md ---\nNOTES" in report.text
    assert report.text.index("NOTES") < report.text.index(PROJECT_HEADER)
    assert [(h.path, h.scope) for h in report.loaded][:2] == [
        (global_dir / ".goosehints", "global"),
        (home / ".agents" / "AGENTS.md", "global"),
    ]
    write(home / ".agents" / "AGENTS.md", "escape @../secret.md")
    escaped = load_hint_files(repo, global_dir=global_dir, home_dir=home)
    assert "SECRET" not in escaped and "@../secret.md" in escaped


def test_agents_home_file_needs_agents_md_among_the_names(
    repo: Path, global_dir: Path, tmp_path: Path
) -> None:
    write(tmp_path / "home" / ".agents" / "AGENTS.md", "shared rules")
    names = [".goosehints", "CLAUDE.md"]
    assert load_hint_files(repo, names, global_dir=global_dir, home_dir=tmp_path / "home") == ""
    assert "shared rules" in load_hint_files(
        repo, ["AGENTS.md"], global_dir=global_dir, home_dir=tmp_path / "home"
    )


def test_agents_home_is_read_only_when_the_caller_names_a_home(repo: Path) -> None:
    write(Path(os.environ["GOSLING_HOME"]) / ".agents" / "AGENTS.md", "relocated home rules")
    assert load_hint_files(repo) == ""
    dirs = user_hint_dirs()  # the command line's: $GOSLING_HOME stands for ~
    assert "relocated home rules" in load_hint_files(repo, home_dir=dirs.home_dir)


def test_the_file_names_variable_is_not_read_by_the_library(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(repo / "AGENTS.md", "agents")
    write(repo / "CLAUDE.md", "claude")
    monkeypatch.setenv("GOSLING_CONTEXT_FILE_NAMES", '["CLAUDE.md"]')
    text = load_hint_files(repo)
    assert "agents" in text and "claude" not in text


def test_headers_can_be_reworded(repo: Path, global_dir: Path) -> None:
    write(global_dir / "AGENTS.md", "g")
    write(repo / "AGENTS.md", "p")
    write(repo / "sub" / "AGENTS.md", "s")
    headers = HintHeaders(
        global_hints="## Mine",
        project_hints="## Theirs",
        subdirectory_hints="## In {{ directory }}",
    )
    text = load_hint_files(repo, global_dir=global_dir, headers=headers)
    assert text == "## Mine\ng\n\n## Theirs\np"
    tracker = SubdirectoryHintTracker(headers=headers)
    tracker.record_tool_arguments({"path": "sub/x.py"}, repo)
    [(_, sub_text)] = tracker.load_new_hints(repo)
    assert sub_text == f"## In {repo.resolve() / 'sub'}\ns"


def test_a_symlinked_alias_is_loaded_once(repo: Path, global_dir: Path) -> None:
    write(repo / "AGENTS.md", "shared rules")
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")
    text = load_hint_files(repo, ["AGENTS.md", "CLAUDE.md"], global_dir=global_dir)
    assert text.count("shared rules") == 1


def test_project_hint_symlinked_outside_the_repo_is_refused(
    repo: Path, global_dir: Path, tmp_path: Path
) -> None:
    secret = write(tmp_path / "secret.txt", "private key material")
    (repo / "AGENTS.md").symlink_to(secret)
    report = collect_hints(repo, global_dir=global_dir)
    assert "private key material" not in report.text
    assert [r.reason for r in report.refused] == [RefusalReason.OUTSIDE_BOUNDARY]


def test_binary_and_invalid_utf8_hint_files_are_skipped_with_a_warning(
    repo: Path, global_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(repo / "AGENTS.md", b"\x89PNG\r\n\x1a\n\0\0\0")
    write(repo / ".goosehints", b"caf\xe9 latin-1")
    write(repo / "sub" / "AGENTS.md", "readable rules")
    with caplog.at_level(logging.WARNING, logger="hints"):
        report = collect_hints(repo / "sub", global_dir=global_dir)
    assert "readable rules" in report.text
    assert [r.reason for r in report.refused] == [RefusalReason.NOT_TEXT] * 2
    assert sum("binary or not valid UTF-8" in m for m in caplog.messages) == 2


def test_a_utf8_bom_is_not_passed_to_the_model(repo: Path, global_dir: Path) -> None:
    write(repo / "AGENTS.md", "\ufeffrules".encode())
    assert load_hint_files(repo, global_dir=global_dir) == PROJECT_HEADER + "rules"


def test_empty_hint_files_add_nothing(repo: Path, global_dir: Path) -> None:
    write(repo / "AGENTS.md", "\n  \n")
    assert collect_hints(repo, global_dir=global_dir).loaded == ()


def test_a_file_that_would_overflow_the_budget_is_skipped_whole(
    repo: Path, global_dir: Path
) -> None:
    write(global_dir / "AGENTS.md", "g" * 100)
    write(repo / "AGENTS.md", "r" * 300)
    write(repo / "sub" / "AGENTS.md", "s" * 50)
    budget = len(GLOBAL_HEADER) + 100 + 2 + len(PROJECT_HEADER) + 200
    report = collect_hints(repo / "sub", global_dir=global_dir, budget_bytes=budget)
    assert "g" * 100 in report.text
    assert "r" not in report.text.replace(PROJECT_HEADER, "").replace(GLOBAL_HEADER, "")
    assert "s" * 50 in report.text
    assert [r.path for r in report.refused] == [repo / "AGENTS.md"]
    assert report.refused[0].reason is RefusalReason.HINT_BUDGET
    assert report.budget_used == len(report.text.encode()) <= budget


def test_budget_counts_bytes_not_characters(repo: Path, global_dir: Path) -> None:
    write(repo / "AGENTS.md", "é" * 100)
    tight = len(PROJECT_HEADER) + 150
    assert collect_hints(repo, global_dir=global_dir, budget_bytes=tight).text == ""
    roomy = len(PROJECT_HEADER) + 200
    assert "é" in collect_hints(repo, global_dir=global_dir, budget_bytes=roomy).text


def test_the_report_lists_files_and_sizes(repo: Path, global_dir: Path) -> None:
    write(repo / "AGENTS.md", "see @docs/a.md")
    write(repo / "docs" / "a.md", "imported")
    report = collect_hints(repo, global_dir=global_dir)
    (hint,) = report.loaded
    assert (hint.path, hint.scope, hint.size_bytes) == (repo / "AGENTS.md", "project", 14)
    assert hint.output_bytes > hint.size_bytes
    assert [(i.ref, i.path, i.size_bytes) for i in hint.imports] == [
        ("docs/a.md", repo / "docs" / "a.md", 8)
    ]
    assert report.git_root == repo


def test_missing_working_dir_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError, match="not an existing directory"):
        load_hint_files(tmp_path / "nope")
