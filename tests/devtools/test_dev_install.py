"""`python3 dev.py install` puts `gosling` where a new login shell finds it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _install(home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_BIN_HOME", "VIRTUAL_ENV")}
    env["HOME"] = str(home)
    return subprocess.run(
        [sys.executable, str(ROOT / "dev.py"), "install", "--link"],
        capture_output=True,
        text=True,
        env=env,
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
