"""The developer tree tool (.gitignore, caps) and the session task list."""

from __future__ import annotations

from pathlib import Path

from gosling.agent.tools import DeveloperSettings, MemoryExtensionData, ToolContext, ToolResult
from gosling.agent.tools.developer import (
    TODO_KEY,
    TodoItem,
    developer_extension,
    read_todo,
    render_todo_block,
)


async def call(
    name: str, root: Path, settings: DeveloperSettings | None = None, **args: object
) -> ToolResult:
    tool = next(t for t in developer_extension(settings).tools() if t.name == name)
    return await tool.call(dict(args), ToolContext(root))


def make_project(root: Path) -> None:
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "mod.py").write_text("a = 1\nb = 2\n")
    (root / "src" / ".gitignore").write_text("generated.py\n")
    (root / "src" / "generated.py").write_text("x\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_bytes(b"\x00")
    (root / "debug.log").write_text("noise\n")
    (root / "keep.log").write_text("kept\n")
    (root / "logo.bin").write_bytes(b"\x00\x01\x02")
    (root / "README.md").write_text("# hi\n")


async def test_tree_respects_gitignore_files_at_every_level(tmp_path: Path) -> None:
    make_project(tmp_path)
    result = await call("tree", tmp_path)
    assert result.text_content() == "\n".join(
        [
            "src/",
            "  pkg/",
            "    mod.py (2 lines)",
            "  .gitignore (1 lines)",
            ".gitignore (3 lines)",
            "keep.log (1 lines)",
            "logo.bin (binary, 3 bytes)",
            "README.md (1 lines)",
        ]
    )


async def test_tree_of_a_subdirectory_applies_the_ignores_above_it(tmp_path: Path) -> None:
    make_project(tmp_path)
    result = await call("tree", tmp_path, path="src")
    assert result.text_content() == "src/\npkg/\n  mod.py (2 lines)\n.gitignore (1 lines)"


async def test_tree_caps_depth_and_entries(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "leaf.txt").write_text("x\n")
    shallow = await call("tree", tmp_path, depth=2)
    assert shallow.text_content() == "a/\n  b/\n    …"
    for n in range(30):
        (tmp_path / f"f{n:02}.txt").write_text("")
    capped = await call("tree", tmp_path, DeveloperSettings(tree_max_entries=10), depth=1)
    lines = capped.text_content().splitlines()
    # 31 entries: a/ (with its "…" marker) and f00..f07 fill the 10 lines, 22 are left out.
    assert lines[:3] == ["a/", "  …", "f00.txt (0 lines)"]
    assert len(lines) == 11
    assert lines[-1] == "[22 more entries not shown; call tree on a subdirectory]"


async def test_tree_refuses_files(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("")
    result = await call("tree", tmp_path, path="x.txt")
    assert result.is_error and "is not a directory (use view for files)" in result.text_content()


async def test_todo_list_is_stored_in_session_extension_data(tmp_path: Path) -> None:
    data = MemoryExtensionData()
    ext = developer_extension()
    write = next(t for t in ext.tools() if t.name == "todo_write")
    read = next(t for t in ext.tools() if t.name == "todo_read")
    ctx = ToolContext(tmp_path, data)
    assert (await read.call({}, ctx)).text_content() == "The task list is empty."
    items = [
        {"content": "read the code", "status": "done"},
        {"content": "write the fix", "status": "in_progress"},
        {"content": "run the tests"},
    ]
    written = await write.call({"items": items}, ctx)
    expected = (
        "Task list (1/3 done):\n- [x] read the code\n- [~] write the fix\n- [ ] run the tests"
    )
    assert written.text_content() == expected
    assert data.get(TODO_KEY) == [
        {"content": "read the code", "status": "done"},
        {"content": "write the fix", "status": "in_progress"},
        {"content": "run the tests", "status": "pending"},
    ]
    assert (await read.call({}, ToolContext(tmp_path, data))).text_content() == expected
    assert render_todo_block(read_todo(data)) == expected


async def test_todo_items_are_validated(tmp_path: Path) -> None:
    result = await call("todo_write", tmp_path, items=[{"content": "x", "status": "blocked"}])
    assert result.is_error
    assert (
        "items.0.status: Input should be 'pending', 'in_progress' or 'done'"
        in result.text_content()
    )


def test_todo_block_is_empty_without_tasks_and_survives_bad_data() -> None:
    assert render_todo_block([]) == ""
    assert read_todo(MemoryExtensionData({TODO_KEY: "garbage"})) == []
    assert read_todo(MemoryExtensionData({TODO_KEY: [{"content": "a", "status": "done"}]})) == [
        TodoItem(content="a", status="done")
    ]
