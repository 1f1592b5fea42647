"""Big outputs stay small for the model: ambiguous edits, enormous lines, and the one cap on
every tool result (MCP servers' included), with the full text saved where `view` reads it."""

from __future__ import annotations

import base64
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from gosling.agent.tools import BuiltinExtension, DeveloperSettings, ExtensionManager, ToolContext
from gosling.agent.tools.base import ToolResult, tool
from gosling.agent.tools.developer import ResultCaps, developer_extension
from gosling.agent.tools.developer.output import StreamCapture, tail_within
from gosling.conversation import ImageContent, TextContent

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell")


async def call(ext: BuiltinExtension, root: Path, name: str, **arguments: Any) -> ToolResult:
    item = next(t for t in ext.tools() if t.name == name)
    return await item.call(arguments, ToolContext(root))


# -- edit with many matches -------------------------------------------------------------------


async def test_an_edit_matching_thousands_of_times_gets_a_short_error(tmp_path: Path) -> None:
    rows = "".join(f"{n},north,10\n" for n in range(1, 5001))
    (tmp_path / "data.csv").write_text("id,region,amount\n" + rows)
    ext = developer_extension()
    result = await call(ext, tmp_path, "edit", path="data.csv", old=",north,", new=",south,")
    text = result.text_content()
    assert result.is_error
    assert text.startswith(
        "old occurs 5,000 times in data.csv (first at lines 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, …); "
        "nothing was changed."
    )
    assert "At line 2:\n1\tid,region,amount\n2\t1,north,10\n3\t2,north,10" in text
    assert text.endswith("…and 4,998 more.")
    assert len(text) < 1_000
    assert ",south," not in (tmp_path / "data.csv").read_text()


async def test_overlapping_matches_are_still_ambiguous(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("aaa\n")
    ext = developer_extension()
    result = await call(ext, tmp_path, "edit", path="f.txt", old="aa", new="b")
    assert result.is_error and "at lines 1, 1)" in result.text_content()


# -- long lines -------------------------------------------------------------------------------


async def test_a_30_mb_single_line_shows_its_head_and_tail_and_length(tmp_path: Path) -> None:
    ext = developer_extension(DeveloperSettings(spill_dir=tmp_path / "spill"))
    command = (
        f"{sys.executable} -c \"import sys; sys.stdout.write('START' + 'x' * 30_000_000 + 'END')\""
    )
    result = await call(ext, tmp_path, "shell", command=command)
    text = result.text_content()
    stdout = text.split(" ---\n", 1)[1].split("\n--- stderr")[0]
    assert "last 1 of 1 lines (30,000,008 bytes in all)" in text
    assert stdout.startswith("STARTxxx")
    assert stdout.endswith("xxxEND")
    assert "[line cut: 30,000,008 bytes in all]" in stdout
    assert 40_000 < len(stdout.encode()) <= 50_000


def test_a_long_line_between_short_ones_is_cut_not_dropped(tmp_path: Path) -> None:
    capture = StreamCapture("stdout", max_lines=100, max_bytes=1_000, spill_dir=tmp_path)
    capture.feed(b"first\n" + b"HEAD" + b"y" * 20_000)
    capture.feed(b"y" * 20_000 + b"TAIL\nlast line\n")
    result = capture.result()
    lines = result.text.splitlines()
    assert lines[-1] == "last line"
    assert lines[-2].startswith("HEADyyy") and lines[-2].endswith("yyyTAIL")
    assert "[line cut: 40,008 bytes in all]" in lines[-2]
    assert len(result.text.encode()) <= 1_000


def test_tail_within_keeps_whole_lines_when_they_fit() -> None:
    assert tail_within("a\nbb\nccc\n", max_lines=2, max_bytes=100) == "bb\nccc"
    cut = tail_within("z" * 5_000, max_lines=10, max_bytes=1_000)
    assert cut.startswith("zzz") and "[line cut: 5,000 bytes in all]" in cut


# -- the cap on every tool result -------------------------------------------------------------


def flood(text: str, images: tuple[ImageContent, ...] = ()) -> BuiltinExtension:
    @tool(read_only=True)
    async def dump() -> ToolResult:
        """Return a lot."""
        return ToolResult((TextContent(text=text), *images))

    return BuiltinExtension("big", [dump])


async def test_a_huge_tool_result_keeps_its_head_and_the_rest_is_saved(tmp_path: Path) -> None:
    text = "FIRST\n" + "".join(f"row {n},{'v' * 40}\n" for n in range(200_000)) + "LAST\n"
    caps = ResultCaps(spill_dir=tmp_path / "spill")
    developer = developer_extension(spill_files=caps.spill_files)
    ctx = ToolContext(tmp_path)
    async with ExtensionManager([flood(text), developer], result_limit=caps) as manager:
        result = await manager.call("big__dump", {}, ctx)
        shown = result.text_content()
        assert shown.startswith("FIRST\nrow 0,")
        assert len(shown.encode()) < 51_000
        note = re.search(r"the full output is in (\S+); read the rest with view", shown)
        assert note, shown[-500:]
        assert "of 200,002 lines" in shown
        spill = Path(note.group(1))
        assert spill.read_text() == text  # noqa: ASYNC240 - a test reading its own file
        more = await manager.call(
            "developer__view", {"path": str(spill), "view_range": [200_002, -1]}, ctx
        )
        assert not more.is_error and more.text_content().endswith("200002\tLAST")


async def test_a_single_enormous_line_is_cut_to_head_and_tail(tmp_path: Path) -> None:
    caps = ResultCaps(spill_dir=tmp_path)
    async with ExtensionManager([flood("<" + "j" * 5_000_000 + ">")], result_limit=caps) as m:
        shown = (await m.call("big__dump", {}, ToolContext(tmp_path))).text_content()
    assert shown.startswith("<jjj")
    assert "jjj> … [line cut" not in shown and "jjj>\n[Output cut" in shown
    assert "[line cut: 5,000,002 bytes in all]" in shown
    assert len(shown.encode()) < 51_000


async def test_images_over_the_limit_are_saved_and_described(tmp_path: Path) -> None:
    big = ImageContent(
        data=base64.b64encode(b"\x89PNG" + b"\0" * 3000).decode(), mime_type="image/png"
    )
    small = ImageContent(data=base64.b64encode(b"GIF89a").decode(), mime_type="image/gif")
    caps = ResultCaps(max_image_bytes=1_000, spill_dir=tmp_path)
    async with ExtensionManager([flood("pictures", (small, big))], result_limit=caps) as m:
        result = await m.call("big__dump", {}, ToolContext(tmp_path))
    first, kept, note = result.content
    assert first == TextContent(text="pictures") and kept == small
    assert isinstance(note, TextContent)
    saved = re.search(r"saved to (\S+)\.\]$", note.text)
    assert note.text.startswith("[image/png image of 3,004 bytes left out: over the 1,000-byte")
    assert saved and Path(saved.group(1)).read_bytes() == b"\x89PNG" + b"\0" * 3000  # noqa: ASYNC240 - a test reading its own file


async def test_results_within_the_caps_are_left_as_they_are(tmp_path: Path) -> None:
    caps = ResultCaps(spill_dir=tmp_path / "spill")
    async with ExtensionManager([flood("ok\n" * 100)], result_limit=caps) as manager:
        result = await manager.call("big__dump", {}, ToolContext(tmp_path))
    assert result.text_content() == "ok\n" * 100
    assert not (tmp_path / "spill").exists()
