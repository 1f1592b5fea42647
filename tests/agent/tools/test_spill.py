"""Spill files: private, redacted even when output arrives in arbitrary chunks, swept."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gosling.agent.tools.spill import (
    open_spill_file,
    session_tmp_dir,
    spill_dir_for,
    sweep_spill_files,
)

KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEsecretbody0123456789\n-----END RSA PRIVATE KEY-----\n"


@pytest.mark.parametrize("chunk", [1, 7, 4096, 70_000])
def test_a_secret_split_across_chunks_is_still_redacted(tmp_path: Path, chunk: int) -> None:
    token = "ghp_" + "Q" * 36
    data = ("x" * 65_530 + "\n" + token + "\n" + KEY + "y\n" * 10).encode()
    with open_spill_file(tmp_path / "spill", "stdout") as spill:
        for start in range(0, len(data), chunk):
            spill.write(data[start : start + chunk])
    saved = spill.path.read_text()
    assert token not in saved and "MIIEsecret" not in saved
    assert "[REDACTED:github-token]" in saved and "[REDACTED:private-key]" in saved
    assert saved.endswith("y\n" * 10)
    assert stat.S_IMODE(spill.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(spill.path.parent.stat().st_mode) == 0o700


def test_spill_files_live_with_their_session() -> None:
    home = Path(os.environ["GOSLING_HOME"])
    assert spill_dir_for("20260101_3") == home / "state" / "sessions" / "20260101_3" / "spill"
    with pytest.raises(ValueError):
        spill_dir_for("../../etc")


def test_the_sweep_removes_only_old_files() -> None:
    now = 1_000_000_000.0
    old_dir = spill_dir_for("old")
    old_dir.mkdir(parents=True)
    old = old_dir / "gosling-stdout-a.txt"
    old.write_text("a")
    os.utime(old, (now - 8 * 86400, now - 8 * 86400))
    fresh = spill_dir_for("fresh")
    fresh.mkdir(parents=True)
    (fresh / "gosling-stdout-b.txt").write_text("b")
    os.utime(fresh / "gosling-stdout-b.txt", (now - 86400, now - 86400))
    assert sweep_spill_files(now=now) == 1
    assert not old_dir.parent.exists()
    assert (fresh / "gosling-stdout-b.txt").exists()


def test_a_sessions_tmp_goes_a_week_after_the_sessions_last_command(tmp_path: Path) -> None:
    now = 1_000_000_000.0
    outside = tmp_path / "outside.txt"
    outside.write_text("not the session's")
    stale, used = session_tmp_dir("stale"), session_tmp_dir("used")
    (stale / "build").mkdir()
    (stale / "build" / "a.o").write_text("x")
    (stale / "link").symlink_to(outside)
    (used / "repro.py").write_text("print(1)")
    os.utime(stale, (now - 8 * 86400, now - 8 * 86400))
    os.utime(used, (now - 86400, now - 86400))
    sweep_spill_files(now=now)
    assert not stale.parent.exists()
    assert outside.read_text() == "not the session's", "a symlink in it is removed, not followed"
    assert (used / "repro.py").exists()
