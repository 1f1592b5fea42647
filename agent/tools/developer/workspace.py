"""Settings and per-session state of the developer tools, and the path rules they share.

Paths resolve against the session's working dir, symlinks included, and every file tool
(view, write, edit, undo_edit, tree) refuses a path that lands outside it unless
`allow_outside_working_dir` is set. Reading is refused too, not only writing: a model that
can read `~/.ssh` or another project can leak it, and the shell tool is the explicit,
permission-checked way to reach beyond the project.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from gosling.agent.sandbox import SandboxPolicy
from gosling.agent.tools.base import ToolError

BINARY_SNIFF_BYTES = 8192
T = TypeVar("T")


class EditorFiles(Protocol):
    """The open buffers of the editor a session runs in (ACP's `fs/*` methods). Called
    from the file tools' worker thread, after their own path and file checks."""

    def read(self, path: Path) -> str | None:
        """The editor's text of an existing file, or None to read the disk."""
        ...

    def write(self, path: Path, text: str) -> bool:
        """Write an existing file through the editor; False to write the disk."""
        ...


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
    sandbox: SandboxPolicy | None = None
    """The bubblewrap sandbox shell commands run in; None runs them unsandboxed."""
    env_allow: tuple[str, ...] = ()
    """Credential-like environment variables shell commands still get (config
    `shell_env_allow`); every other one is removed from their environment."""
    spill_dir: Path | None = None
    """Where overflowing command output is written; None means the session's spill directory
    (`agent.tools.spill.spill_dir_for`)."""
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
    file_timeout_secs: float = 60.0
    """Time limit of one file tool call (its disk I/O runs in a thread, off the event loop)."""
    editor_files: EditorFiles | None = None
    """Where the editor offers it, existing files are read and written through its
    buffers, so unsaved changes are seen (`gosling acp`)."""


@dataclass(frozen=True)
class Version:
    """One change gosling made to a file: what was there before, and what it wrote."""

    previous: bytes | None
    """None means the file did not exist."""
    written: bytes
    """sha256 of the content gosling wrote; undo refuses once the file no longer has it."""


def digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


@dataclass
class DeveloperState:
    """What the tools remember during one session: earlier file versions, spill files."""

    settings: DeveloperSettings = field(default_factory=DeveloperSettings)
    history: dict[Path, list[Version]] = field(default_factory=dict)
    """Path -> the changes gosling made to it, newest last."""
    spill_files: set[Path] = field(default_factory=set)
    """Files holding output that went over the caps; `view` may read them wherever they are."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held while a tool reads, changes and records a file, so parallel calls take turns."""

    def record(self, path: Path, previous: bytes | None, written: bytes) -> None:
        """Remember a change so that `undo_edit` can take it back."""
        versions = self.history.setdefault(path, [])
        versions.append(Version(previous, digest(written)))
        del versions[: -self.settings.undo_depth]

    async def off_loop(self, tool_name: str, work: Callable[[], T]) -> T:
        """Run a file tool's disk work in a thread within `file_timeout_secs`, so that a slow
        or stuck filesystem never freezes the event loop (or Ctrl-C)."""
        timeout = self.settings.file_timeout_secs
        try:
            return await asyncio.wait_for(asyncio.to_thread(work), timeout)
        except TimeoutError:
            raise ToolError(
                f"{tool_name} did not finish within {timeout:g}s (a slow or stuck filesystem?) "
                "and was abandoned; it may still complete in the background."
            ) from None

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
