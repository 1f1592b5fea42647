from __future__ import annotations

import logging
from pathlib import Path

import pytest

from gosling.hints import (
    MAX_REFERENCE_OPERATIONS,
    RefusalReason,
    collect_hints,
    load_hint_files,
)
from gosling.hints.imports import MAX_PARSE_BYTES
from tests.hints.trees import write


def _hints(repo: Path, global_dir: Path, working_dir: Path | None = None) -> str:
    return load_hint_files(working_dir or repo, ["AGENTS.md"], global_dir=global_dir)


def _reasons(repo: Path, global_dir: Path, working_dir: Path | None = None) -> list[str]:
    report = collect_hints(working_dir or repo, ["AGENTS.md"], global_dir=global_dir)
    return [f"{r.ref}: {r.reason.name}" for r in report.refused]


def test_a_reference_is_replaced_by_the_file_between_markers(repo: Path, global_dir: Path) -> None:
    write(repo / "AGENTS.md", "Read @docs/style.md first.")
    write(repo / "docs" / "style.md", "Use snake_case.")
    assert _hints(repo, global_dir).endswith(
        "Read --- Content from docs/style.md ---\nUse snake_case.\n"
        "--- End of docs/style.md --- first."
    )


def test_references_are_relative_to_the_including_file(repo: Path, global_dir: Path) -> None:
    write(repo / "AGENTS.md", "@docs/index.md")
    write(repo / "docs" / "index.md", "@./part.md and @../shared.md")
    write(repo / "docs" / "part.md", "PART")
    write(repo / "shared.md", "SHARED")
    text = _hints(repo, global_dir)
    assert "--- Content from ./part.md ---\nPART\n--- End of ./part.md ---" in text
    assert "--- Content from ../shared.md ---\nSHARED\n" in text


@pytest.mark.parametrize(
    "line",
    [
        "mail user@example.com please",
        "ping @username about it",
        "`@Makefile` in code",
        "the scope @cloudflare/kumo-styles",
    ],
)
def test_text_that_is_not_an_import_stays_as_written(
    repo: Path, global_dir: Path, line: str
) -> None:
    write(repo / "AGENTS.md", line)
    write(repo / "Makefile", "all:")
    write(repo / "example.com", "not this")
    report = collect_hints(repo, ["AGENTS.md"], global_dir=global_dir)
    assert report.text.endswith(line)
    assert report.loaded[0].imports == ()


def test_bare_capitalized_names_and_trailing_punctuation(repo: Path, global_dir: Path) -> None:
    write(repo / "AGENTS.md", "See @Makefile, then @README.md.")
    write(repo / "Makefile", "MAKE")
    write(repo / "README.md", "READ")
    text = _hints(repo, global_dir)
    assert "--- End of Makefile ---, then" in text
    assert text.endswith("--- End of README.md ---.")


def test_imports_nest_three_levels_deep_and_no_further(repo: Path, global_dir: Path) -> None:
    write(repo / "AGENTS.md", "@one.md")
    write(repo / "one.md", "ONE @two.md")
    write(repo / "two.md", "TWO @three.md")
    write(repo / "three.md", "THREE @four.md")
    write(repo / "four.md", "FOUR")
    text = _hints(repo, global_dir)
    assert "ONE" in text and "TWO" in text and "THREE @four.md" in text
    assert "FOUR" not in text
    assert _reasons(repo, global_dir) == ["four.md: DEPTH_LIMIT"]


def test_at_most_64_references_are_followed_per_file(repo: Path, global_dir: Path) -> None:
    refs = [f"@f{i}.md" for i in range(MAX_REFERENCE_OPERATIONS + 1)]
    write(repo / "AGENTS.md", "\n".join(refs))
    for i in range(MAX_REFERENCE_OPERATIONS + 1):
        write(repo / f"f{i}.md", f"body{i}")
    text = _hints(repo, global_dir)
    assert "body63" in text
    assert "body64" not in text and text.endswith("\n@f64.md")
    assert _reasons(repo, global_dir) == ["f64.md: OPERATION_LIMIT"]


def test_imports_stop_at_one_mebibyte_per_hint_file(repo: Path, global_dir: Path) -> None:
    write(repo / "AGENTS.md", "@big.md\n@big.md\n@small.md")
    write(repo / "big.md", "x" * 600_000)
    write(repo / "small.md", "small")
    text = _hints(repo, global_dir)
    assert text.count("x" * 600_000) == 1
    assert "\n@big.md\n" in text and "small" in text
    assert _reasons(repo, global_dir) == ["big.md: IMPORT_BUDGET"]


def test_a_cycle_is_left_literal_and_its_content_appears_once(repo: Path, global_dir: Path) -> None:
    write(repo / "AGENTS.md", "MAIN @a.md")
    write(repo / "a.md", "AAA @b.md")
    write(repo / "b.md", "BBB @a.md @AGENTS.md")
    text = _hints(repo, global_dir)
    assert text.count("AAA") == 1 and text.count("BBB") == 1 and text.count("MAIN") == 1
    assert "BBB @a.md @AGENTS.md" in text
    assert _reasons(repo, global_dir) == ["a.md: CYCLE", "AGENTS.md: CYCLE"]


def test_the_same_file_twice_in_a_row_is_expanded_twice(repo: Path, global_dir: Path) -> None:
    write(repo / "AGENTS.md", "@note.md and again @note.md")
    write(repo / "note.md", "NOTE")
    assert _hints(repo, global_dir).count("NOTE") == 2


@pytest.mark.parametrize(
    ("ref", "reason"),
    [
        ("/etc/hostname", "ABSOLUTE_PATH"),
        ("../outside.md", "OUTSIDE_BOUNDARY"),
        ("../../../../../../etc/hostname", "OUTSIDE_BOUNDARY"),
        ("escape.md", "OUTSIDE_BOUNDARY"),
        (".git/config", "GIT_METADATA"),
        ("bare.git/HEAD.md", "GIT_METADATA"),
        ("missing.md", "MISSING"),
        ("docs/", "NOT_A_FILE"),
        ("image.png", "NOT_TEXT"),
    ],
)
def test_unsafe_or_unusable_references_are_refused_with_a_warning(
    repo: Path,
    global_dir: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    ref: str,
    reason: str,
) -> None:
    write(tmp_path / "outside.md", "OUTSIDE SECRET")
    (repo / "escape.md").symlink_to(tmp_path / "outside.md")
    write(repo / ".git" / "config", "[core]")
    bare = repo / "bare.git"
    for name in ("objects", "refs"):
        (bare / name).mkdir(parents=True)
    write(bare / "HEAD", "ref: refs/heads/main\n")
    write(bare / "HEAD.md", "BARE")
    (repo / "docs").mkdir()
    write(repo / "image.png", b"\x89PNG\0\0")
    write(repo / "AGENTS.md", f"before @{ref} after")

    with caplog.at_level(logging.WARNING, logger="hints"):
        text = _hints(repo, global_dir)

    assert text.endswith(f"before @{ref} after")
    assert _reasons(repo, global_dir) == [f"{ref}: {reason}"]
    assert any(f"@{ref}" in message for message in caplog.messages)


def test_a_symlinked_directory_escaping_the_repo_is_refused(
    repo: Path, global_dir: Path, tmp_path: Path
) -> None:
    write(tmp_path / "elsewhere" / "notes.md", "FAR AWAY")
    (repo / "linked").symlink_to(tmp_path / "elsewhere")
    write(repo / "AGENTS.md", "@linked/notes.md")
    assert "FAR AWAY" not in _hints(repo, global_dir)
    assert _reasons(repo, global_dir) == ["linked/notes.md: OUTSIDE_BOUNDARY"]


def test_a_symlink_that_stays_inside_the_repo_is_followed(repo: Path, global_dir: Path) -> None:
    write(repo / "real" / "notes.md", "INSIDE")
    (repo / "alias").symlink_to(repo / "real")
    write(repo / "AGENTS.md", "@alias/notes.md")
    assert "INSIDE" in _hints(repo, global_dir)


def test_the_git_root_bounds_imports_from_a_deeper_working_dir(
    repo: Path, global_dir: Path
) -> None:
    write(repo / "shared.md", "SHARED")
    write(repo / "pkg" / "AGENTS.md", "@../shared.md")
    assert "SHARED" in _hints(repo, global_dir, repo / "pkg")


def test_without_git_the_working_dir_bounds_imports(tmp_path: Path, global_dir: Path) -> None:
    write(tmp_path / "shared.md", "SHARED")
    write(tmp_path / "work" / "AGENTS.md", "@../shared.md")
    assert "SHARED" not in _hints(tmp_path, global_dir, tmp_path / "work")


def test_gitignored_files_are_not_imported(repo: Path, global_dir: Path) -> None:
    write(repo / ".gitignore", "*.secret\nbuild/\n")
    write(repo / "AGENTS.md", "@keys.secret @build/out.md @notes.md")
    write(repo / "keys.secret", "TOKEN")
    write(repo / "build" / "out.md", "GENERATED")
    write(repo / "notes.md", "NOTES")
    text = _hints(repo, global_dir)
    assert "TOKEN" not in text and "GENERATED" not in text and "NOTES" in text
    assert _reasons(repo, global_dir) == ["keys.secret: GITIGNORED", "build/out.md: GITIGNORED"]


def test_gitignores_from_root_to_each_file_are_merged(repo: Path, global_dir: Path) -> None:
    work = repo / "pkg" / "app"
    write(repo / ".gitignore", "*.log\n")
    write(repo / "pkg" / ".gitignore", "private/\n!keep.log\n")
    write(repo / "other" / ".gitignore", "*.md\n")
    write(
        work / "AGENTS.md", "@debug.log @keep.log @private/p.md @../../other/x.md @../private/q.md"
    )
    for name in ("debug.log", "keep.log", "private/p.md"):
        write(work / name, name.upper())
    write(repo / "other" / "x.md", "OTHER")
    write(repo / "pkg" / "private" / "q.md", "Q")
    text = _hints(repo, global_dir, work)
    assert "DEBUG.LOG" not in text
    assert "KEEP.LOG" in text
    assert "PRIVATE/P.MD" not in text
    assert "OTHER" not in text  # other/.gitignore ignores *.md below other/, as git does
    assert "\nQ\n" not in text


def test_a_negation_cannot_reinclude_a_file_of_an_ignored_directory(
    repo: Path, global_dir: Path
) -> None:
    write(repo / ".gitignore", "secret/\n!secret/ok.md\n")
    write(repo / "secret" / "ok.md", "STILL IGNORED")
    write(repo / "AGENTS.md", "@secret/ok.md")
    assert "STILL IGNORED" not in _hints(repo, global_dir)


def test_a_symlink_to_an_ignored_file_is_refused(repo: Path, global_dir: Path) -> None:
    write(repo / ".gitignore", ".env\n")
    write(repo / ".env", "API_KEY=1")
    (repo / "env.md").symlink_to(repo / ".env")
    write(repo / "AGENTS.md", "@env.md")
    assert "API_KEY" not in _hints(repo, global_dir)


def test_no_imports_inside_code_spans_or_fenced_blocks(repo: Path, global_dir: Path) -> None:
    write(repo / "note.md", "NOTE")
    write(
        repo / "AGENTS.md",
        "Inline `@note.md` and ``x @note.md y`` stay.\n\n"
        "```sh\ncat @note.md\n```\n\n"
        "~~~~\n@note.md\n~~~~\n\n"
        "But @note.md expands.\n",
    )
    text = _hints(repo, global_dir)
    assert text.count("NOTE") == 1
    assert "But --- Content from note.md ---" in text


def test_an_unclosed_fence_protects_the_rest_of_the_file(repo: Path, global_dir: Path) -> None:
    write(repo / "note.md", "NOTE")
    write(repo / "AGENTS.md", "@note.md\n```\n@note.md\n")
    assert _hints(repo, global_dir).count("NOTE") == 1


def test_an_unmatched_backtick_does_not_hide_the_next_paragraph(
    repo: Path, global_dir: Path
) -> None:
    write(repo / "note.md", "NOTE")
    write(repo / "AGENTS.md", "a stray ` here\n\n@note.md and ` there")
    assert "NOTE" in _hints(repo, global_dir)


def test_very_large_hint_files_are_not_scanned_for_imports(repo: Path, global_dir: Path) -> None:
    write(repo / "note.md", "NOTE")
    write(repo / "AGENTS.md", "@note.md\n" + "x" * MAX_PARSE_BYTES)
    assert "NOTE" not in _hints(repo, global_dir)


def test_global_hints_import_only_from_the_global_dir_ignoring_gitignore(
    repo: Path, global_dir: Path
) -> None:
    write(global_dir / ".gitignore", "*.md\n")
    write(global_dir / "AGENTS.md", "@mine.md @../repo/AGENTS.md")
    write(global_dir / "mine.md", "MINE")
    write(repo / "AGENTS.md", "project")
    report = collect_hints(repo, ["AGENTS.md"], global_dir=global_dir)
    assert "MINE" in report.text
    assert [(r.ref, r.reason) for r in report.refused] == [
        ("../repo/AGENTS.md", RefusalReason.OUTSIDE_BOUNDARY)
    ]


def test_an_ignored_name_is_refused_even_if_it_links_to_a_tracked_file(
    repo: Path, global_dir: Path
) -> None:
    write(repo / ".gitignore", "local.md\n")
    write(repo / "notes.md", "NOTES")
    (repo / "local.md").symlink_to(repo / "notes.md")
    write(repo / "AGENTS.md", "@local.md")
    assert _reasons(repo, global_dir) == ["local.md: GITIGNORED"]
