"""Every hook that applies to a run, and where it came from.

The user's config and a trusted project's config add up (`LoadedSettings.hook_layers`; an
untrusted project's `hooks` never reach them, see `agent.untrusted_config`), then the Claude
Code `settings.json` files named in `hook_settings`. A relative name there is the project's
own file (`.claude/settings.json`): read only when the folder is trusted, and hashed with it
(`agent.trust.PROJECT_FILES`), so an edit to it makes the folder untrusted again.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from gosling.agent.hooks.config import (
    ConfiguredHook,
    HookConfig,
    SkippedHook,
    flatten,
    read_claude_settings,
)

if TYPE_CHECKING:
    from gosling.agent.config import LoadedSettings


def collect_hooks(
    loaded: LoadedSettings, working_dir: Path, *, trust_project: bool = False
) -> HookConfig:
    """The hooks of `loaded` (see the module docstring); unusable settings files are named
    in `problems`, never fatal."""
    hooks: list[ConfiguredHook] = []
    skipped: list[SkippedHook] = []
    problems: list[str] = []
    for origin, table in loaded.hook_layers:
        hooks += flatten(table, origin)
    root = _project_root(loaded, working_dir)
    for name in loaded.settings.hook_settings:
        path = Path(name).expanduser()
        in_project = not path.is_absolute()
        if in_project:
            path = root / path
            if not (trust_project or _trusted(root)):
                reason = _why_untrusted(root)
                why = f" ({reason})" if reason else ""
                problems.append(
                    f"ignored the hooks of untrusted {path}{why}; to run them: "
                    f"gosling trust {shlex.quote(str(root))}"
                )
                continue
        if not path.is_file():
            if not in_project:
                problems.append(f"hook_settings names {path}, which does not exist")
            continue
        try:
            found, cannot = read_claude_settings(path, str(path))
        except ValueError as exc:
            problems.append(f"ignored hook_settings file: {exc}")
            continue
        hooks += found
        skipped += cannot
    return HookConfig(tuple(hooks), tuple(skipped), tuple(problems))


def _project_root(loaded: LoadedSettings, working_dir: Path) -> Path:
    """The git root, as for the project's `.mcp.json`."""
    from gosling.agent.sandbox.choice import project_root

    return project_root(working_dir.resolve())


def _why_untrusted(root: Path) -> str | None:
    from gosling.agent.trust import TrustStore, project_files

    return TrustStore.default().why_untrusted(root, project_files(root))


def _trusted(root: Path) -> bool:
    from gosling.agent.trust import TrustStore, project_files

    files = project_files(root)
    return bool(files) and TrustStore.default().is_trusted(root, files)
