from __future__ import annotations

from pathlib import Path

import pytest

from gosling.conversation import ToolRequest
from gosling.hints import SubdirectoryHintTracker, resolve_to_parent_dir
from tests.hints.trees import write


def _keys(entries: list[tuple[str, str]]) -> list[str]:
    return [key for key, _ in entries]


def _touch(repo: Path, **arguments: object) -> list[tuple[str, str]]:
    tracker = SubdirectoryHintTracker()
    tracker.record_tool_arguments(arguments, repo)
    return tracker.load_new_hints(repo)


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("src/main.rs", "wd/src"),
        ("src", "wd"),
        ("/tmp/foo.rs", "/tmp"),
        ("a/b/c.txt", "wd/a/b"),
    ],
)
def test_resolve_to_parent_dir(token: str, expected: str) -> None:
    assert resolve_to_parent_dir(token, "wd") == Path(expected)


def test_resolve_to_parent_dir_ignores_empty_tokens() -> None:
    assert resolve_to_parent_dir("  ", "wd") is None


def test_a_touched_file_loads_its_directory_hints_with_a_header(repo: Path) -> None:
    write(repo / "api" / "AGENTS.md", "api rules")
    ((key, content),) = _touch(repo, path="api/handler.py")
    api = repo.resolve() / "api"
    assert key == f"subdir_hints:{api}"
    assert content.splitlines()[0] == f"### Subdirectory Hints ({api})"
    assert f"inside {api} and its subdirectories" in content
    assert content.endswith("api rules")


@pytest.mark.parametrize("key", ["path", "file_path", "file"])
def test_every_path_argument_counts(repo: Path, key: str) -> None:
    write(repo / "api" / "AGENTS.md", "api rules")
    assert len(_touch(repo, **{key: "api/x.py"})) == 1


@pytest.mark.parametrize("key", ["cwd", "workdir"])
def test_a_working_directory_argument_counts_as_the_directory_itself(repo: Path, key: str) -> None:
    write(repo / "api" / "AGENTS.md", "api rules")
    assert len(_touch(repo, **{key: "api"})) == 1


def test_a_path_naming_an_existing_directory_loads_that_directory(repo: Path) -> None:
    write(repo / "api" / "AGENTS.md", "api rules")
    assert len(_touch(repo, path="api")) == 1


def test_absolute_paths_inside_the_working_dir_count(repo: Path) -> None:
    write(repo / "api" / "AGENTS.md", "api rules")
    assert len(_touch(repo, path=str(repo / "api" / "x.py"))) == 1


def test_command_tokens_that_look_like_paths_count(repo: Path) -> None:
    write(repo / "a" / "AGENTS.md", "A")
    write(repo / "b" / "AGENTS.md", "B")
    write(repo / "c" / "AGENTS.md", "C")
    entries = _touch(repo, command="grep -rn --include=c/x.py 'TODO' a/x.py b/y.ts c")
    assert [content[-1] for _, content in entries] == ["A", "B"]


def test_an_unparsable_command_contributes_nothing(repo: Path) -> None:
    write(repo / "a" / "AGENTS.md", "A")
    assert _touch(repo, command="cat 'a/x.py") == []


def test_non_string_and_missing_arguments_are_ignored(repo: Path) -> None:
    write(repo / "a" / "AGENTS.md", "A")
    tracker = SubdirectoryHintTracker()
    tracker.record_tool_arguments(None, repo)
    tracker.record_tool_arguments({}, repo)
    tracker.record_tool_arguments({"path": 3, "command": ["a/x.py"], "query": "a/x.py"}, repo)
    assert tracker.load_new_hints(repo) == []


def test_only_directories_strictly_inside_the_working_dir(repo: Path, tmp_path: Path) -> None:
    write(repo / "AGENTS.md", "working dir rules")
    write(tmp_path / "other" / "AGENTS.md", "other rules")
    tracker = SubdirectoryHintTracker()
    tracker.record_tool_arguments({"path": "main.py"}, repo)
    tracker.record_tool_arguments({"path": str(tmp_path / "other" / "x.py")}, repo)
    tracker.record_tool_arguments({"path": "../other/x.py"}, repo)
    assert tracker.load_new_hints(repo) == []


def test_intermediate_directories_load_top_down(repo: Path) -> None:
    write(repo / "a" / "AGENTS.md", "A")
    write(repo / "a" / "b" / "c" / "AGENTS.md", "C")
    write(repo / "a" / "b" / "c" / ".goosehints", "C2")
    entries = _touch(repo, path="a/b/c/d/e.py")
    real = repo.resolve()
    assert _keys(entries) == [f"subdir_hints:{real / 'a'}", f"subdir_hints:{real / 'a/b/c'}"]
    assert entries[1][1].endswith("C2\nC")


def test_each_file_is_handed_out_once_in_first_seen_order(repo: Path) -> None:
    for name in ("x", "y", "z"):
        write(repo / name / "AGENTS.md", name.upper())
    tracker = SubdirectoryHintTracker()
    tracker.record_tool_arguments({"path": "y/1.py"}, repo)
    tracker.record_tool_arguments({"command": "cat z/1.py y/2.py x/1.py"}, repo)
    first = tracker.load_new_hints(repo)
    assert [content[-1] for _, content in first] == ["Y", "Z", "X"]
    tracker.record_tool_arguments({"path": "x/2.py"}, repo)
    tracker.record_tool_arguments({"path": "y/sub/3.py"}, repo)
    assert tracker.load_new_hints(repo) == []


def test_a_directory_created_later_is_picked_up_on_a_later_call(repo: Path) -> None:
    write(repo / "new" / "AGENTS.md", "NEW")
    tracker = SubdirectoryHintTracker()
    tracker.record_tool_arguments({"path": "new/pkg/mod.py"}, repo)
    first = tracker.load_new_hints(repo)
    assert [content[-3:] for _, content in first] == ["NEW"]
    write(repo / "new" / "pkg" / "AGENTS.md", "PKG")
    second = tracker.load_new_hints(repo)
    assert [content[-3:] for _, content in second] == ["PKG"]
    assert tracker.load_new_hints(repo) == []


def test_a_hint_file_written_later_is_found_when_the_directory_is_touched_again(
    repo: Path,
) -> None:
    (repo / "api").mkdir()
    tracker = SubdirectoryHintTracker()
    tracker.record_tool_arguments({"path": "api/x.py"}, repo)
    assert tracker.load_new_hints(repo) == []
    write(repo / "api" / "AGENTS.md", "API")
    tracker.record_tool_arguments({"path": "api/AGENTS.md"}, repo)
    assert [c[-3:] for _, c in tracker.load_new_hints(repo)] == ["API"]


def test_a_symlinked_directory_outside_the_working_dir_is_rejected(
    repo: Path, tmp_path: Path
) -> None:
    write(tmp_path / "elsewhere" / "AGENTS.md", "ELSEWHERE")
    (repo / "link").symlink_to(tmp_path / "elsewhere")
    assert _touch(repo, path="link/x.py") == []


def test_a_symlinked_alias_inside_the_working_dir_loads_once(repo: Path) -> None:
    write(repo / "real" / "AGENTS.md", "REAL")
    (repo / "alias").symlink_to(repo / "real")
    tracker = SubdirectoryHintTracker()
    tracker.record_tool_arguments({"command": "diff alias/x.py real/x.py"}, repo)
    entries = tracker.load_new_hints(repo)
    assert _keys(entries) == [f"subdir_hints:{repo.resolve() / 'real'}"]


def test_git_metadata_directories_are_never_hint_sources(repo: Path) -> None:
    write(repo / ".git" / "hooks" / "AGENTS.md", "HOOKS")
    assert _touch(repo, path=".git/hooks/pre-commit") == []


def test_subdirectory_hints_expand_imports_within_the_repo(repo: Path, tmp_path: Path) -> None:
    write(repo / "docs" / "guide.md", "GUIDE")
    write(repo / "api" / "AGENTS.md", "@../docs/guide.md")
    ((_, content),) = _touch(repo, path="api/x.py")
    assert "--- Content from ../docs/guide.md ---\nGUIDE" in content


def test_the_budget_skips_a_file_whole(repo: Path) -> None:
    write(repo / "small" / "AGENTS.md", "s" * 10)
    write(repo / "large" / "AGENTS.md", "L" * 5000)
    tracker = SubdirectoryHintTracker(budget_bytes=1000)
    tracker.record_tool_arguments({"command": "ls large/x small/y"}, repo)
    entries = tracker.load_new_hints(repo)
    assert [c[-10:] for _, c in entries] == ["s" * 10]
    assert [r.path for r in tracker.refused] == [repo / "large" / "AGENTS.md"]


def test_a_vanished_working_dir_yields_nothing(tmp_path: Path) -> None:
    tracker = SubdirectoryHintTracker()
    tracker.record_tool_arguments({"path": "a/b.py"}, tmp_path / "gone")
    assert tracker.load_new_hints(tmp_path / "gone") == []


def test_restoring_from_tool_requests_skips_hints_already_delivered(repo: Path) -> None:
    write(repo / "old" / "AGENTS.md", "OLD")
    write(repo / "new" / "AGENTS.md", "NEW")
    history = [
        ToolRequest(id="1", name="developer__shell", arguments={"command": "cat old/a.py"}),
        ToolRequest(id="2", name="developer__text_editor", arguments={}),
    ]
    tracker = SubdirectoryHintTracker.from_tool_requests(history, repo)
    tracker.record_tool_arguments({"command": "cat old/b.py new/c.py"}, repo)
    assert [c[-3:] for _, c in tracker.load_new_hints(repo)] == ["NEW"]


def test_file_names_follow_the_tracker_configuration(repo: Path) -> None:
    write(repo / "api" / "AGENTS.md", "AGENTS")
    write(repo / "api" / "CLAUDE.md", "CLAUDE")
    tracker = SubdirectoryHintTracker(["CLAUDE.md"])
    tracker.record_tool_arguments({"path": "api/x.py"}, repo)
    ((_, content),) = tracker.load_new_hints(repo)
    assert content.endswith("CLAUDE") and "AGENTS\n" not in content


def test_bad_file_names_fail_when_the_tracker_is_built() -> None:
    with pytest.raises(ValueError, match="plain file name"):
        SubdirectoryHintTracker(["a/AGENTS.md"])
