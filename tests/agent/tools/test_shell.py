"""The developer shell tool: results, process-group hygiene, output caps, scrubbed env."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest

from gosling.agent.tools import BuiltinExtension, DeveloperSettings, ToolContext, ToolResult
from gosling.agent.tools.developer import developer_extension
from gosling.agent.tools.developer.process import default_shell
from tests.agent.tools.processes import is_running, wait_until

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")


def tools(settings: DeveloperSettings | None = None) -> BuiltinExtension:
    return developer_extension(settings or DeveloperSettings())


async def shell(
    tmp_path: Path, command: str, settings: DeveloperSettings | None = None, **extra: object
) -> ToolResult:
    ext = tools(settings)
    tool = next(t for t in ext.tools() if t.name == "shell")
    return await tool.call({"command": command, **extra}, ToolContext(tmp_path))


async def test_reports_exit_code_and_streams_separately(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("")
    result = await shell(tmp_path, "ls; echo oops >&2; exit 3")
    assert not result.is_error
    expected = "Exit code: 3\n--- stdout ---\nmarker.txt\n--- stderr ---\noops"
    assert result.text_content() == expected


async def test_stdin_is_closed_so_reading_it_ends_at_once(tmp_path: Path) -> None:
    result = await shell(tmp_path, "cat; echo done")
    assert result.text_content() == "Exit code: 0\n--- stdout ---\ndone\n--- stderr: (empty) ---"


async def test_credentials_are_removed_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "secret-value")
    monkeypatch.setenv("DATABASE_URL", "postgres://app:hunter2@db/app")
    monkeypatch.setenv("PLAIN_SETTING", "kept")
    result = await shell(tmp_path, "env")
    assert "secret-value" not in result.text_content()
    assert "hunter2" not in result.text_content()
    assert "PLAIN_SETTING=kept" in result.text_content()


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    result = await shell(
        tmp_path, "sleep 60 & echo $! > bg.pid; echo started; sleep 60", timeout_secs=0.5
    )
    assert result.is_error
    text = result.text_content()
    assert text.startswith("Timed out after 0.5s")
    assert "started" in text
    background = int((tmp_path / "bg.pid").read_text())
    await wait_until(lambda: not is_running(background), within=5)


async def test_cancellation_kills_the_whole_process_group(tmp_path: Path) -> None:
    call = asyncio.create_task(shell(tmp_path, "sleep 60 & echo $! > bg.pid; sleep 60"))
    pid_file = tmp_path / "bg.pid"
    await wait_until(lambda: pid_file.exists() and pid_file.read_text().strip() != "")
    background = int(pid_file.read_text())
    assert is_running(background)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await wait_until(lambda: not is_running(background), within=5)


async def test_a_background_child_holding_the_output_does_not_hang_the_call(
    tmp_path: Path,
) -> None:
    result = await shell(tmp_path, "sleep 60 & echo $! > bg.pid; echo ready", timeout_secs=30)
    assert not result.is_error
    assert "Exit code: 0" in result.text_content()
    assert "were stopped" in result.text_content()
    await wait_until(lambda: not is_running(int((tmp_path / "bg.pid").read_text())), within=5)


@pytest.mark.parametrize(
    "command",
    [
        "sleep 60 > /dev/null 2>&1 & echo $! > bg.pid",
        "setsid sleep 60 > /dev/null 2>&1 & echo $! > bg.pid",
        "(setsid sh -c 'sleep 60 & echo $! > bg.pid; wait' > /dev/null 2>&1 &); "
        "while [ ! -s bg.pid ]; do :; done",
    ],
    ids=["background", "setsid", "setsid-double-fork"],
)
async def test_nothing_the_command_started_outlives_the_call(tmp_path: Path, command: str) -> None:
    result = await shell(tmp_path, command)
    assert result.text_content().startswith("Exit code: 0")
    background = int((tmp_path / "bg.pid").read_text())
    await wait_until(lambda: not is_running(background), within=5)


async def test_a_setsid_child_holding_the_output_is_stopped(tmp_path: Path) -> None:
    result = await shell(tmp_path, "setsid sleep 60 & echo $! > bg.pid; echo ready")
    assert "ready" in result.text_content()
    assert "were stopped" in result.text_content()
    await wait_until(lambda: not is_running(int((tmp_path / "bg.pid").read_text())), within=5)


async def test_long_output_shows_the_tail_and_saves_everything(tmp_path: Path) -> None:
    settings = DeveloperSettings(spill_dir=tmp_path / "spill")
    result = await shell(tmp_path, "seq 1 5000; echo tiny >&2", settings)
    text = result.text_content()
    size = sum(len(str(n)) + 1 for n in range(1, 5001))
    header = re.search(
        rf"--- stdout: last 2000 of 5000 lines \({size:,} bytes in all\); "
        r"the full output is in (\S+) ---",
        text,
    )
    assert header, text
    spill = Path(header.group(1))
    assert spill.parent == tmp_path / "spill"
    saved = spill.read_text()  # noqa: ASYNC240 - a test reading a small file
    assert saved.splitlines() == [str(n) for n in range(1, 5001)]
    stdout = text.split(" ---\n", 1)[1].split("\n--- stderr")[0]
    assert stdout.splitlines() == [str(n) for n in range(3001, 5001)]
    assert text.endswith("--- stderr ---\ntiny")


async def test_output_is_capped_by_bytes_too(tmp_path: Path) -> None:
    settings = DeveloperSettings(spill_dir=tmp_path / "spill")
    command = "for i in $(seq 1 300); do printf '%0500d\\n' $i; done"  # 300 x 501 bytes
    result = await shell(tmp_path, command, settings)
    text = result.text_content()
    assert "last 99 of 300 lines (150,300 bytes in all)" in text
    assert len(text.encode()) < 51_000


async def test_the_model_can_view_the_saved_output(tmp_path: Path) -> None:
    ext = tools(DeveloperSettings(spill_dir=tmp_path.parent / f"{tmp_path.name}-spill"))
    by_name = {t.name: t for t in ext.tools()}
    ctx = ToolContext(tmp_path)
    result = await by_name["shell"].call({"command": "seq 1 3000"}, ctx)
    spill = re.search(r"the full output is in (\S+) ---", result.text_content())
    assert spill
    viewed = await by_name["view"].call({"path": spill.group(1), "view_range": [1, 2]}, ctx)
    assert not viewed.is_error
    assert viewed.text_content().endswith("1\t1\n2\t2")


def test_bash_is_preferred_and_sh_is_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None if name == "bash" else f"/bin/{name}")
    assert default_shell() == "/bin/sh"
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/bin/{name}")
    assert default_shell() == "/usr/bin/bash"


async def test_an_empty_command_and_a_bad_timeout_are_refused(tmp_path: Path) -> None:
    assert (await shell(tmp_path, "  ")).text_content() == "The command is empty."
    refused = await shell(tmp_path, "true", timeout_secs=-1)
    assert refused.is_error and "timeout_secs" in refused.text_content()
