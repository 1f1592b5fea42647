"""What the command line reads from the user's home that the library never reads by itself.

The library (`gosling.prompts`, `gosling.hints`, `gosling.context_mgmt`) reads nothing outside
the package unless its caller says where: the command line says here. Prompt overrides come
from `<config dir>/prompts/`, global hints from the config dir and `~/.agents/AGENTS.md`
(`$GOSLING_HOME` stands for `~` when set, so a relocated gosling, and every test, never reads
the real home).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from gosling.prompts.locations import user_dirs


def use_user_prompts() -> None:
    """Let every prompt prefer the user's file in `<config dir>/prompts/` (idempotent)."""
    from gosling.prompts import use_override_dir, user_override_dir

    use_override_dir(user_override_dir())


def use_user_token_cache() -> None:
    """Let the tokenizer keep a parsed rank table in `<state dir>/cache` when the one shipped
    with the package cannot be used (the library writes nothing by default)."""
    from gosling.context_mgmt.tokens import use_cache_dir

    use_cache_dir(lambda: user_dirs().state / "cache")


@dataclass(frozen=True)
class HintDirs:
    global_dir: Path
    """Where global hint files live: gosling's config dir."""
    home_dir: Path
    """What `~` is for `~/.agents/AGENTS.md`."""


def user_hint_dirs() -> HintDirs:
    relocated = os.environ.get("GOSLING_HOME")
    home = Path(relocated).expanduser() if relocated else Path.home()
    return HintDirs(global_dir=user_dirs().config, home_dir=home)
