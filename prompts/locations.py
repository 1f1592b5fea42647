"""Where gosling keeps its files. `GOSLING_HOME` relocates config, data and state in one go."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

APP_NAME = "gosling"


@dataclass(frozen=True)
class UserDirs:
    config: Path
    data: Path
    state: Path


def user_dirs() -> UserDirs:
    """Config, data and state directories: under `$GOSLING_HOME` when set, else platformdirs."""
    home = os.environ.get("GOSLING_HOME")
    if home:
        root = Path(home).expanduser()
        return UserDirs(root / "config", root / "data", root / "state")
    import platformdirs

    return UserDirs(
        Path(platformdirs.user_config_dir(APP_NAME)),
        Path(platformdirs.user_data_dir(APP_NAME)),
        Path(platformdirs.user_state_dir(APP_NAME)),
    )
