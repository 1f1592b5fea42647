"""The developer file tools: view, write, edit, undo_edit, and the path rules they share."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from gosling.agent.tools import DeveloperSettings, ToolContext, ToolResult
from gosling.agent.tools.developer import developer_extension
from gosling.conversation import ImageContent


class Files:
    """The developer tools of one session, called by name."""

    def __init__(self, root: Path, settings: DeveloperSettings | None = None) -> None:
        self.root = root
        self.tools = {t.name: t for t in developer_extension(settings).tools()}

    async def __call__(self, name: str, **arguments: Any) -> ToolResult:
        return await self.tools[name].call(arguments, ToolContext(self.root))


@pytest.fixture
def files(tmp_path: Path) -> Files:
    root = tmp_path / "project"
    root.mkdir()
    return Files(root)


# -- view -------------------------------------------------------------------------------------


async def test_view_numbers_lines_and_honours_a_range(files: Files) -> None:
    (files.root / "notes.txt").write_text("alpha\nbeta\ngamma\ndelta\n")
    whole = await files("view", path="notes.txt")
    assert (
        whole.text_content() == "notes.txt (lines 1-4 of 4)\n1\talpha\n2\tbeta\n3\tgamma\n4\tdelta"
    )
    part = await files("view", path="notes.txt", view_range=[2, 3])
    assert part.text_content() == "notes.txt (lines 2-3 of 4)\n2\tbeta\n3\tgamma"
    to_end = await files("view", path="notes.txt", view_range=[4, -1])
    assert to_end.text_content().endswith("4\tdelta")
    beyond = await files("view", path="notes.txt", view_range=[9, 10])
    assert beyond.is_error and "has only 4 lines" in beyond.text_content()


async def test_view_stops_at_the_line_cap_and_says_how_to_continue(tmp_path: Path) -> None:
    files = Files(tmp_path, DeveloperSettings(view_max_lines=10))
    (tmp_path / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 101)))
    result = await files("view", path="long.txt")
    lines = result.text_content().splitlines()
    assert lines[0] == "long.txt (lines 1-10 of 100)"
    assert lines[10] == "10\tline 10"
    assert (
        lines[-1] == "[Stopped at 10 lines / 100,000 bytes. Use view_range=[11, ...] to see more.]"
    )


async def test_view_refuses_binary_files_politely(files: Files) -> None:
    (files.root / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02" * 100)
    result = await files("view", path="blob.bin")
    assert result.is_error
    assert result.text_content().startswith("blob.bin looks like a binary file (700 bytes)")


async def test_view_returns_small_images_as_images(files: Files) -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
    (files.root / "dot.png").write_bytes(png)
    result = await files("view", path="dot.png")
    image = result.content[1]
    assert isinstance(image, ImageContent)
    assert base64.b64decode(image.data) == png and image.mime_type == "image/png"


async def test_view_explains_directories_and_missing_files(files: Files) -> None:
    (files.root / "src").mkdir()
    assert (
        await files("view", path="src")
    ).text_content() == "src is a directory; use tree to list it."
    assert (await files("view", path="nope.txt")).text_content() == "nope.txt does not exist."


# -- write ------------------------------------------------------------------------------------


async def test_write_creates_parents_and_reports_lines(files: Files) -> None:
    created = await files("write", path="a/b/c.py", content="x = 1\ny = 2\n")
    assert created.text_content() == "Created a/b/c.py (2 lines)"
    assert (files.root / "a/b/c.py").read_text() == "x = 1\ny = 2\n"
    rewritten = await files("write", path="a/b/c.py", content="z = 3")
    assert rewritten.text_content() == "Wrote a/b/c.py (1 lines)"


# -- edit -------------------------------------------------------------------------------------


async def test_edit_replaces_a_unique_match(files: Files) -> None:
    target = files.root / "app.py"
    target.write_text("def main():\n    print('hi')\n    return 0\n")
    result = await files("edit", path="app.py", old="print('hi')", new="print('hello')")
    assert not result.is_error
    assert target.read_text() == "def main():\n    print('hello')\n    return 0\n"
    assert "2\t    print('hello')" in result.text_content()


async def test_edit_without_a_match_shows_the_closest_lines(files: Files) -> None:
    target = files.root / "app.py"
    original = "".join(f"value_{n} = {n}\n" for n in range(1, 40))
    original += "def compute(total):\n    return total * 2\n"
    target.write_text(original)
    result = await files(
        "edit", path="app.py", old="def compute(totl):\n  return total * 2", new=""
    )
    assert result.is_error
    text = result.text_content()
    assert text.startswith("No match for old in app.py; nothing was changed.")
    assert "40\tdef compute(total):" in text and "41\t    return total * 2" in text
    assert "value_10" not in text
    assert target.read_text() == original


async def test_edit_with_several_matches_shows_where(files: Files) -> None:
    target = files.root / "dup.txt"
    target.write_text("x = 1\nflag = True\ny = 2\nflag = True\nz = 3\nflag = True\n")
    result = await files("edit", path="dup.txt", old="flag = True", new="flag = False")
    assert result.is_error
    text = result.text_content()
    assert text.startswith("old occurs 3 times in dup.txt (at lines 2, 4, 6); nothing was changed.")
    assert "At line 2:" in text and "At line 4:" in text and "…and 1 more." in text
    assert "flag = False" not in target.read_text()


async def test_edit_matches_files_with_windows_line_endings(files: Files) -> None:
    target = files.root / "win.txt"
    target.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await files("edit", path="win.txt", old="one\ntwo", new="1\n2")
    assert not result.is_error
    assert target.read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_edit_refuses_binary_files(files: Files) -> None:
    (files.root / "img.dat").write_bytes(b"\x00\x01abc")
    result = await files("edit", path="img.dat", old="abc", new="xyz")
    assert result.is_error and "binary" in result.text_content()
    assert (files.root / "img.dat").read_bytes() == b"\x00\x01abc"


# -- undo_edit --------------------------------------------------------------------------------


async def test_undo_walks_back_edits_and_writes(files: Files) -> None:
    target = files.root / "f.txt"
    await files("write", path="f.txt", content="v1\n")
    await files("edit", path="f.txt", old="v1", new="v2")
    await files("write", path="f.txt", content="v3\n")
    assert target.read_text() == "v3\n"
    first = await files("undo_edit", path="f.txt")
    assert target.read_text() == "v2\n" and "2 earlier version(s) left" in first.text_content()
    await files("undo_edit", path="f.txt")
    assert target.read_text() == "v1\n"
    gone = await files("undo_edit", path="f.txt")
    assert gone.text_content() == "Removed f.txt: it did not exist before the last write."
    assert not target.exists()
    nothing = await files("undo_edit", path="f.txt")
    assert nothing.is_error and "No earlier version of f.txt" in nothing.text_content()


async def test_undo_history_belongs_to_one_session(tmp_path: Path) -> None:
    first, second = Files(tmp_path), Files(tmp_path)
    await first("write", path="f.txt", content="mine")
    assert (await second("undo_edit", path="f.txt")).is_error


# -- paths ------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["view", "write", "edit", "undo_edit", "tree"])
async def test_paths_outside_the_working_dir_are_refused(files: Files, tool: str) -> None:
    outside = files.root.parent / "secret.txt"
    outside.write_text("s3cret")
    arguments: dict[str, Any] = {"path": "../secret.txt"}
    if tool == "write":
        arguments["content"] = "overwritten"
    if tool == "edit":
        arguments.update(old="s3cret", new="x")
    result = await files(tool, **arguments)
    assert result.is_error
    assert "is outside the working directory" in result.text_content()
    assert outside.read_text() == "s3cret"


async def test_absolute_paths_and_symlinks_out_are_refused(files: Files) -> None:
    outside = files.root.parent / "secret.txt"
    outside.write_text("s3cret")
    (files.root / "link.txt").symlink_to(outside)
    for path in (str(outside), "link.txt", "~/anything"):
        result = await files("view", path=path)
        assert result.is_error and "outside the working directory" in result.text_content()


async def test_absolute_paths_inside_the_working_dir_work(files: Files) -> None:
    (files.root / "in.txt").write_text("ok\n")
    result = await files("view", path=str(files.root / "in.txt"))
    assert result.text_content().endswith("1\tok")


async def test_outside_paths_work_when_the_setting_allows_them(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (tmp_path / "shared.txt").write_text("shared\n")
    files = Files(root, DeveloperSettings(allow_outside_working_dir=True))
    result = await files("view", path="../shared.txt")
    assert not result.is_error and result.text_content().endswith("1\tshared")
