"""`python3 dev.py install` puts `gosling` where a new login shell finds it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _install(home: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_BIN_HOME", "VIRTUAL_ENV")}
    env["HOME"] = str(home)
    return subprocess.run(
        [sys.executable, str(ROOT / "dev.py"), "install", "--link", *extra],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def test_install_links_gosling_into_a_bin_dir_that_new_shells_search(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / ".profile").write_text('export PATH="$HOME/bin:$PATH"\n')

    result = _install(home)

    assert result.returncode == 0, result.stderr
    link = home / "bin" / "gosling"
    assert link.resolve() == (ROOT / ".venv" / "bin" / "gosling").resolve()
    new_shell = subprocess.run(
        ["bash", "-lc", "gosling --version"],
        capture_output=True,
        text=True,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert new_shell.returncode == 0, new_shell.stderr
    assert "gosling" in new_shell.stdout.lower()
    assert f"gosling is on PATH in new shells: {link}" in result.stderr


def test_install_never_replaces_another_gosling_in_the_bin_dir_without_a_yes(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / ".profile").write_text('export PATH="$HOME/bin:$PATH"\n')
    theirs = home / "bin" / "gosling"
    theirs.write_text("#!/bin/sh\necho the other gosling\n")
    theirs.chmod(0o755)

    refused = _install(home)  # no terminal to ask on: a no

    assert refused.returncode == 1
    assert theirs.read_text() == "#!/bin/sh\necho the other gosling\n"
    assert f"{theirs} exists (a file)" not in refused.stderr  # no question without a terminal
    assert "python3 dev.py install --force" in refused.stderr

    forced = _install(home, "--force")
    assert forced.returncode == 0, forced.stderr
    assert theirs.resolve() == (ROOT / ".venv" / "bin" / "gosling").resolve()


def test_dev_test_says_each_step_and_how_long_it_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = importlib.util.spec_from_file_location("dev_script", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    monkeypatch.setattr(dev, "_ensure_env", lambda extras: None)
    monkeypatch.setattr(dev, "_ensure_ts_client", lambda: 0)
    monkeypatch.setattr(dev, "PY", Path(sys.executable))
    monkeypatch.setattr(dev, "TIMES", tmp_path / "times.json")
    quick = (
        ("lint", ["-c", "pass"], "seconds"),
        ("tests (pytest)", ["-c", "pass"], "about 20 minutes"),
    )
    monkeypatch.setattr(dev, "TEST_STEPS", quick)

    assert dev.test() == 0
    first = capsys.readouterr().err
    assert "[1/2] lint: seconds" in first and "[2/2] tests (pytest): about 20 minutes" in first
    assert "[2/2] tests (pytest): ok in " in first
    assert dev.test() == 0
    second = capsys.readouterr().err
    assert "[2/2] tests (pytest): last run here took 0 s" in second
