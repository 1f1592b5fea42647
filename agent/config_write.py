"""Writing the user config file: `gosling config set KEY VALUE`, `config unset KEY` and
`gosling configure`. A value is checked exactly as loading would check it (type, choices,
range) before anything is written, the rest of the file (comments, order, tables) is kept as
it was (tomlkit), and the new file replaces the old one whole."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from gosling.agent.config import (
    FIELD_NAMES,
    ConfigError,
    parse_text_value,
    read_config_file,
    validate_settings,
)
from gosling.prompts.locations import UserDirs, user_dirs

TABLE_KEYS = frozenset({"models", "permissions", "extensions"})
"""Settings that are tables or arrays of tables: edited in the file, not with `set`."""


def user_config_path(dirs: UserDirs | None = None) -> Path:
    return (dirs or user_dirs()).config / "config.toml"


def parse_value(key: str, raw: str) -> Any:
    """`raw` as the setting's own type (`"5"` -> 5 for an integer, `"a,b"` -> a list), checked
    on its own and against the rest of the user's file. Raises ConfigError naming the fix."""
    if key not in FIELD_NAMES:
        import difflib

        close = difflib.get_close_matches(key, FIELD_NAMES, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"unknown setting {key!r}{hint} (`gosling config show` lists them all)")
    if key in TABLE_KEYS:
        raise ConfigError(
            f"{key} is a table; edit it in the file (`gosling config path` prints where)"
        )
    value = parse_text_value(key, raw, f"config set {key}")
    checked = validate_settings({key: value}, {key: f"config set {key}"})
    return checked.model_dump(mode="json")[key]


def set_user_setting(key: str, raw: str, dirs: UserDirs | None = None) -> tuple[Any, Path]:
    """Write `key = raw` into the user config; returns the value written and the file."""
    value = parse_value(key, raw)
    path = user_config_path(dirs)
    _edit(path, lambda document: document.__setitem__(key, value))
    return value, path


def unset_user_setting(key: str, dirs: UserDirs | None = None) -> bool:
    """Remove `key` from the user config; False when it was not set there."""
    path = user_config_path(dirs)
    if not path.is_file() or key not in read_config_file(path):
        return False
    _edit(path, lambda document: document.pop(key))
    return True


def _edit(path: Path, change: Any) -> None:
    import tomlkit

    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    try:
        document = tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigError(f"{path}: malformed TOML ({exc}); fix it before changing it") from exc
    change(document)
    updated = tomlkit.dumps(document)
    data = read_config_from_text(updated, path)
    validate_settings(data, dict.fromkeys(data, str(path)))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".config.", suffix=".toml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(updated)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            os.chmod(temp, path.stat().st_mode & 0o777)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def read_config_from_text(text: str, path: Path) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # pragma: no cover - tomlkit wrote it
        raise ConfigError(f"{path}: would write malformed TOML: {exc}") from exc
