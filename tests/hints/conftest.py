"""Temp trees for hint tests: a git repo and an empty global hints dir."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A directory with a `.git` dir, so it is a git root."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def global_dir(tmp_path: Path) -> Path:
    """An empty directory standing in for gosling's config dir."""
    directory = tmp_path / "global"
    directory.mkdir()
    return directory
