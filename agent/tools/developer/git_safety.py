"""The git settings every shell command gets, whatever the permission mode.

A clone can commit a bare repository (HEAD, config, objects/, refs/) as ordinary files; a
command run inside it (`cd evil.git && git status`) would let git read that config and run
its `core.fsmonitor` program. `safe.bareRepository=explicit` makes git refuse a bare
repository it only discovered from the working directory. It is passed as command-line
scope config (`GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`), which git honours for this setting and
which no repository file can override; entries the user already set are kept.
"""

from __future__ import annotations

from collections.abc import Mapping

HARDENED = (("safe.bareRepository", "explicit"),)


def hardened_git_environment(env: Mapping[str, str]) -> dict[str, str]:
    """`env` plus the hardened settings appended to any GIT_CONFIG_COUNT entries."""
    out = dict(env)
    try:
        count = int(out.get("GIT_CONFIG_COUNT", "0") or "0")
    except ValueError:
        count = 0
    for key, value in HARDENED:
        out[f"GIT_CONFIG_KEY_{count}"] = key
        out[f"GIT_CONFIG_VALUE_{count}"] = value
        count += 1
    out["GIT_CONFIG_COUNT"] = str(count)
    return out
