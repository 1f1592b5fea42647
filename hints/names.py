"""Which hint file names to look for, in order.

Callers pass the list; those that pass nothing get the defaults (no environment variable
is read here). The agent passes the command line's `context_file_names` setting (which
`GOSLING_CONTEXT_FILE_NAMES` sets like any other setting).
"""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_FILENAMES: tuple[str, ...] = (".goosehints", "AGENTS.md")
"""goose's default and order: in one directory `.goosehints` comes before `AGENTS.md`."""

_EXAMPLE = "e.g. '[\"AGENTS.md\", \".goosehints\"]' or 'AGENTS.md,.goosehints'"


def resolve_filenames(filenames: Sequence[str] | None = None) -> tuple[str, ...]:
    """The hint file names to use: `filenames` if given, else `DEFAULT_FILENAMES`.

    Raises `ValueError` with the fix when a name is not a plain file name.
    """
    if filenames is None:
        filenames = DEFAULT_FILENAMES
    elif isinstance(filenames, str):
        raise ValueError(f"hint file names must be a list of names, not the string {filenames!r}")
    names = tuple(dict.fromkeys(filenames))
    for name in names:
        _check_name(name)
    return names


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"hint file name {name!r} is empty or not a string; {_EXAMPLE}")
    if "/" in name or "\\" in name or name in (".", "..") or "\0" in name:
        raise ValueError(
            f"hint file name {name!r} must be a plain file name without directories; {_EXAMPLE}"
        )
