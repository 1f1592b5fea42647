"""Settings and per-session state of the developer tools, and the path rules they share.

Paths resolve against the session's working dir, symlinks included, and every file tool
(view, write, edit, undo_edit, tree) refuses a path that lands outside it unless
`allow_outside_working_dir` is set. Reading is refused too, not only writing: a model that
can read `~/.ssh` or another project can leak it, and the shell tool is the explicit,
permission-checked way to reach beyond the project.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent.tools.base import ToolError

BINARY_SNIFF_BYTES = 8192


@dataclass(frozen=True)
class DeveloperSettings:
    """Knobs of the developer extension (the config loader fills these in)."""

    shell_timeout_secs: float = 300.0
    """Default time limit of one shell command; the model may ask for another per call."""
    max_output_lines: int = 2000
    """Per stream (stdout, stderr) of a shell command; beyond it the rest goes to a file."""
    max_output_bytes: int = 50_000
    """Per stream, like `max_output_lines`."""
    shell: str | None = None
    """The shell program; None means bash if installed, else sh."""
    spill_dir: Path | None = None
    """Where overflowing command output is written; None means the system temp dir."""
    allow_outside_working_dir: bool = False
    """Let the file tools use paths outside the working dir (off: they refuse them)."""
    view_max_lines: int = 2000
    """Most lines one `view` call returns; the model asks for the next range."""
    view_max_bytes: int = 100_000
    """Most bytes one `view` call returns."""
    max_image_bytes: int = 5_000_000
    """Images up to this size are returned to the model as images by `view`."""
    tree_max_depth: int = 3
    tree_max_entries: int = 400
    undo_depth: int = 20
    """Earlier versions kept per file for `undo_edit`."""


@dataclass
class DeveloperState:
    """What the tools remember during one session: earlier file versions, spill files."""

    settings: DeveloperSettings = field(default_factory=DeveloperSettings)
    history: dict[Path, list[bytes | None]] = field(default_factory=dict)
    """Path -> earlier contents, newest last; None means the file did not exist."""
    spill_files: set[Path] = field(default_factory=set)
    """Output files written by the shell tool; `view` may read them wherever they are."""

    def remember(self, path: Path) -> None:
        """Keep the current contents of `path` so that `undo_edit` can restore them."""
        previous = path.read_bytes() if path.is_file() else None
        versions = self.history.setdefault(path, [])
        versions.append(previous)
        del versions[: -self.settings.undo_depth]

    def resolve(self, raw: str, working_dir: Path, *, for_reading: bool = False) -> Path:
        """The absolute, symlink-free path for `raw`, or a `ToolError` saying why not."""
        if not raw.strip():
            raise ToolError(
                "The path is empty; give a file path relative to the working directory."
            )
        if "\x00" in raw:
            raise ToolError("The path contains a NUL character.")
        root = working_dir.resolve()
        candidate = Path(raw).expanduser()
        resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
        if for_reading and resolved in self.spill_files:
            return resolved
        if not self.settings.allow_outside_working_dir and not resolved.is_relative_to(root):
            raise ToolError(
                f"{raw} is outside the working directory {root} (it resolves to {resolved}). "
                "The file tools only work inside the working directory; use a path inside it."
            )
        return resolved


def display_path(path: Path, working_dir: Path) -> str:
    """`path` relative to the working dir when inside it, else absolute."""
    root = working_dir.resolve()
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def looks_binary(sample: bytes) -> bool:
    """NUL bytes or invalid UTF-8 in the first few KB (a cut multibyte character is fine)."""
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(sample) - 3
    return False


def ensure_text_file(path: Path, shown: str) -> None:
    """Refuse directories, missing files and binary files with a message the model can use."""
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; use tree to list it.")
    if not path.exists():
        raise ToolError(f"{shown} does not exist.")
    with path.open("rb") as handle:
        sample = handle.read(BINARY_SNIFF_BYTES)
    if looks_binary(sample):
        size = path.stat().st_size
        raise ToolError(
            f"{shown} looks like a binary file ({size:,} bytes); the file tools only read and "
            "edit text. Use the shell (for example `file` or `xxd | head`) to inspect it."
        )


def read_text(path: Path, shown: str) -> str:
    """The whole file as text (newlines kept as they are), refusing binary content."""
    ensure_text_file(path, shown)
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(
            f"{shown} is not valid UTF-8 text; the file tools only edit text."
        ) from None
