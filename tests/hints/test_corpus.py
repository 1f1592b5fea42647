"""The cloudflare/agents hint files: 9 AGENTS.md at depths 0-2, 41 nested .gitignore files."""

from __future__ import annotations

from pathlib import Path

import pytest

from gosling.hints import RefusalReason, SubdirectoryHintTracker, collect_hints
from tests.hints.trees import CORPUS, copy_corpus, write

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="hint corpus not available")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return copy_corpus(tmp_path / "cloudflare-agents").resolve()


def _relative(tree: Path, paths: list[Path]) -> list[str]:
    return [path.relative_to(tree).as_posix() for path in paths]


def test_a_deep_working_dir_loads_the_hints_on_its_path_only(tree: Path, global_dir: Path) -> None:
    deep = tree / "examples" / "webmcp-react" / "src" / "components"
    deep.mkdir(parents=True)

    report = collect_hints(deep, global_dir=global_dir)

    assert report.git_root == tree
    assert _relative(tree, [hint.path for hint in report.loaded]) == [
        "AGENTS.md",
        "examples/AGENTS.md",
        "examples/webmcp-react/AGENTS.md",
    ]
    assert report.refused == ()
    for hint in report.loaded:
        assert hint.path.read_text(encoding="utf-8") in report.text
    assert "# AGENTS.md — examples/" in report.text
    assert "packages/agents" not in _relative(tree, [h.path for h in report.loaded])


def test_the_deepest_directory_loads_only_the_root_hints(tree: Path, global_dir: Path) -> None:
    deepest = tree / "packages" / "worker-bundler" / "src" / "vendor"
    report = collect_hints(deepest, global_dir=global_dir)
    assert _relative(tree, [hint.path for hint in report.loaded]) == ["AGENTS.md"]


def test_touched_subdirectories_load_later_through_the_tracker(tree: Path) -> None:
    tracker = SubdirectoryHintTracker()
    tracker.record_tool_arguments({"path": "packages/agents/src/index.ts"}, tree)
    tracker.record_tool_arguments(
        {"command": "rg -n useAgent examples/webmcp-react/src/app.tsx docs/index.md"}, tree
    )
    tracker.record_tool_arguments({"path": "README.md"}, tree)

    first = tracker.load_new_hints(tree)

    assert [key.removeprefix("subdir_hints:") for key, _ in first] == [
        str(tree / "packages" / "agents"),
        str(tree / "examples"),
        str(tree / "examples" / "webmcp-react"),
        str(tree / "docs"),
    ]
    assert _relative(tree, [hint.path for hint in tracker.loaded]) == [
        "packages/agents/AGENTS.md",
        "examples/AGENTS.md",
        "examples/webmcp-react/AGENTS.md",
        "docs/AGENTS.md",
    ]
    tracker.record_tool_arguments({"cwd": "examples/ai-chat"}, tree)
    tracker.record_tool_arguments({"path": "design/rfc.md"}, tree)
    second = tracker.load_new_hints(tree)
    assert [key.removeprefix("subdir_hints:") for key, _ in second] == [str(tree / "design")]


def test_the_corpus_gitignore_rules_guard_imports(tree: Path, global_dir: Path) -> None:
    vendor = tree / "packages" / "worker-bundler" / "src" / "vendor"
    write(vendor / "typescript.browser.js", "VENDORED")
    write(vendor / "esbuild.wasm", "NOT IGNORED HERE")
    write(tree / ".env", "SECRET=1")
    write(tree / "packages" / "worker-bundler" / "src" / "esbuild.wasm", "IGNORED WASM")
    write(
        vendor / "AGENTS.md",
        "@typescript.browser.js @../../../../.env @../esbuild.wasm @esbuild.wasm",
    )

    report = collect_hints(vendor, global_dir=global_dir)

    assert "NOT IGNORED HERE" in report.text
    assert "VENDORED" not in report.text and "SECRET" not in report.text
    assert "IGNORED WASM" not in report.text
    assert [(r.ref, r.reason) for r in report.refused] == [
        ("typescript.browser.js", RefusalReason.GITIGNORED),
        ("../../../../.env", RefusalReason.GITIGNORED),
        ("../esbuild.wasm", RefusalReason.GITIGNORED),
    ]
