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


HINT_SUFFIXES = (".md", ".mdc", ".markdown")
"""What a hint file chosen by an untrusted project may end in (besides `.goosehints`)."""
_SENSITIVE_WORDS = ("secret", "credential", "password", "passwd", "token", "private")


def untrusted_name_problem(name: object) -> str | None:
    """Why an untrusted project may not choose `name` as a hint file name, or None.

    Such a project may choose only hint-file names: `.goosehints`, or a Markdown file name
    (`CLAUDE.md`, `CONVENTIONS.md`) that is no dotfile and does not name a secret. Never a
    path, a dotfile (`.env`, `.npmrc`), a config file (`config.toml`) or `secrets.md`: the
    files a checkout holds that are not meant for the model (gitignored `.env`) must not be
    pulled into the prompt by the checkout's own config.
    """
    if not isinstance(name, str) or not name.strip():
        return "not a file name"
    if "/" in name or "\\" in name or "\0" in name or name in (".", ".."):
        return "a path, not a plain file name"
    if name == ".goosehints":
        return None
    if name.startswith("."):
        return "a dotfile other than .goosehints"
    stem, _, suffix = name.lower().rpartition(".")
    if not stem or f".{suffix}" not in HINT_SUFFIXES:
        return f"not a Markdown file ({', '.join(HINT_SUFFIXES)}) or .goosehints"
    if any(word in stem for word in _SENSITIVE_WORDS):
        return "a name for secrets, not hints"
    return None
