"""The one-time question of `gosling session` in a folder whose project config is untrusted.

It shows what the file would change (only the settings that trust would add) and asks y/N.
Yes records trust (`agent.trust`); no, or any other answer, keeps the file untrusted and
prints the warning line with the command that trusts the folder later.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from gosling.agent.config import ConfigError, ProjectConfig, load_settings, read_config_file
from gosling.agent.trust import TrustStore, project_files
from gosling.agent.untrusted_config import describe_values


def untrusted_project(working_dir: Path | None, flags: Mapping[str, Any]) -> ProjectConfig | None:
    """The project config that trust would change, or None (none, trusted, or harmless)."""
    try:
        project = load_settings(working_dir, flags=flags).project
    except ConfigError:
        return None  # the runtime reports it
    if project is None or project.trusted or not project.ignored:
        return None
    return project


def trust_question(project: ProjectConfig) -> list[str]:
    """What to show above the y/N question."""
    from gosling.agent.trust_display import NOT_SHOWN, trust_lines

    try:
        data = read_config_file(project.path)
    except ConfigError:
        data = {}
    keys = [key for key in project.ignored if key.split(".")[0] not in NOT_SHOWN]
    try:
        runs = trust_lines(project.root, settings=False)  # servers, hooks, their scripts
    except ValueError:
        runs = []
    return [
        f"{project.path} is not trusted. Trusting {project.root} would also apply:",
        *([f"  ({project.why_untrusted})"] if project.why_untrusted else []),
        *(f"  {line}" for line in describe_values(data, keys)),
        *runs,
    ]


async def offer_trust(
    project: ProjectConfig,
    show: Callable[[str], None],
    ask: Callable[[str], Awaitable[bool]],
    store: TrustStore | None = None,
) -> bool:
    """Ask once; True (and trust recorded) when the user says yes."""
    for line in trust_question(project):
        show(line)
    if await ask("Trust this folder? [y/N] "):
        (store or TrustStore.default()).trust(project.root, project_files(project.root))
        show(f"trusted {project.root}")
        return True
    show(f"not trusted: {project.warning()}")
    return False
