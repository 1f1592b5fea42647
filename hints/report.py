"""What hint loading did: the files it used, the imports it expanded, what it refused and why.

`load_hint_files` returns only the text; `gosling hints` prints the whole report.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal

Scope = Literal["global", "project", "subdirectory"]


class RefusalReason(StrEnum):
    """Why an `@file` import was left literal or a hint file was skipped."""

    ABSOLUTE_PATH = "absolute paths are not imported"
    OUTSIDE_BOUNDARY = "outside the import boundary"
    GIT_METADATA = "inside git metadata"
    GITIGNORED = "ignored by .gitignore"
    MISSING = "no such file"
    NOT_A_FILE = "not a regular file"
    NOT_TEXT = "binary or not valid UTF-8"
    CYCLE = "import cycle"
    DEPTH_LIMIT = "nested deeper than the import depth limit"
    OPERATION_LIMIT = "too many imports in one hint file"
    IMPORT_BUDGET = "imports would exceed their output limit"
    HINT_BUDGET = "would exceed the hint output budget"
    UNREADABLE = "could not be read"


@dataclass(frozen=True)
class Refusal:
    """One refused import (`ref` set, `source` = the including file) or skipped hint file."""

    reason: RefusalReason
    path: Path | None
    ref: str | None = None
    source: Path | None = None
    scope: Scope | None = None

    def describe(self) -> str:
        if self.ref is None:
            return f"{self.path}: {self.reason}"
        target = f" ({self.path})" if self.path is not None else ""
        return f"@{self.ref}{target} in {self.source}: {self.reason}"


@dataclass(frozen=True)
class ImportedFile:
    """An `@file` reference that was expanded."""

    ref: str
    path: Path
    source: Path
    depth: int
    size_bytes: int


@dataclass(frozen=True)
class LoadedHint:
    """A hint file whose (expanded) content is part of the output."""

    path: Path
    scope: Scope
    size_bytes: int
    output_bytes: int
    imports: tuple[ImportedFile, ...] = ()


@dataclass(frozen=True)
class HintReport:
    """Everything `load_hint_files` would put in the system prompt, and how it got there."""

    working_dir: Path
    git_root: Path | None
    filenames: tuple[str, ...]
    global_dir: Path | None
    """Where global hints were looked for; None when the caller passed no global dir."""
    text: str
    loaded: tuple[LoadedHint, ...]
    refused: tuple[Refusal, ...]
    budget_bytes: int

    @property
    def budget_used(self) -> int:
        return len(self.text.encode("utf-8"))
