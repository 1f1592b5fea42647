"""`@file` imports inside hint files.

A hint file may pull in another file by writing `@path` after whitespace (or at the very
start). The reference is replaced by the file's content between `--- Content from {ref} ---`
and `--- End of {ref} ---` markers. Anything that is not clearly a safe, readable text file
inside the project is left as written and logged: the model then sees the literal `@path`.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gosling.hints.gitignore import GitignoreRules
from gosling.hints.markdown import code_regions, inside
from gosling.hints.report import ImportedFile, Refusal, RefusalReason

logger = logging.getLogger(__name__)

MAX_DEPTH = 3
"""The hint file is depth 0; files it imports are depth 1; imports at depth 3 stay literal."""
MAX_REFERENCE_OPERATIONS = 64
"""References looked at per hint file (expanded or refused); later ones stay literal."""
MAX_EXPANDED_OUTPUT_BYTES = 1024 * 1024
"""Bytes imports may add to one hint file, markers included."""
MAX_PARSE_BYTES = 131_072
"""Text longer than this is taken as it is, without looking for references."""

REFERENCE = re.compile(
    r"(?:^|(?<=\s))@("
    r"[a-zA-Z0-9_\-./]+(?:\.[a-zA-Z0-9]+)+"
    r"|[A-Z][a-zA-Z0-9_\-]*"
    r"|[a-zA-Z0-9_\-./]*[./][a-zA-Z0-9_\-./]*"
    r")"
)


class NotTextError(ValueError):
    """The file holds binary data or is not valid UTF-8."""


def read_text(path: Path) -> str:
    """The file as UTF-8 text (a leading BOM dropped); `NotTextError` for binary content."""
    data = path.read_bytes()
    if b"\0" in data:
        raise NotTextError(f"{path} contains NUL bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotTextError(f"{path} is not valid UTF-8 ({exc.reason})") from exc
    return text.removeprefix("\ufeff")


def wrap(ref: str, content: str) -> str:
    return f"--- Content from {ref} ---\n{content}\n--- End of {ref} ---"


_WRAP_OVERHEAD = len(wrap("", "").encode())


@dataclass(frozen=True)
class ImportScope:
    """Where imports may come from: files under `boundary` that `ignore` does not exclude."""

    boundary: Path
    ignore: GitignoreRules


class ImportExpander:
    """Expands the references of one hint file; collects what it imported and refused."""

    def __init__(self, scope: ImportScope, budget: int = MAX_EXPANDED_OUTPUT_BYTES) -> None:
        self._boundary = Path(os.path.realpath(scope.boundary))
        self._ignore = scope.ignore
        self._operations = 0
        self._budget = min(budget, MAX_EXPANDED_OUTPUT_BYTES)
        self.budget_used = 0
        """Bytes the expanded imports added (markers included)."""
        self.imports: list[ImportedFile] = []
        self.refusals: list[Refusal] = []

    def expand(self, text: str, path: Path) -> str:
        """`text` (the content of the hint file at `path`) with its references expanded."""
        real = Path(os.path.realpath(path))
        return self._expand(text, real, 0, (real,))

    def _expand(self, text: str, source: Path, depth: int, stack: tuple[Path, ...]) -> str:
        if "@" not in text or len(text.encode()) > MAX_PARSE_BYTES:
            return text
        regions: list[tuple[int, int]] | None = None
        pieces: list[str] = []
        last = 0
        for match in REFERENCE.finditer(text):
            if regions is None:
                regions = code_regions(text)
            if inside(regions, match.start()):
                continue
            expanded = self._import(match.group(1), source, depth, stack)
            if expanded is not None:
                pieces += (text[last : match.start()], expanded)
                last = match.end()
        return "".join(pieces) + text[last:] if pieces else text

    def _import(self, ref: str, source: Path, depth: int, stack: tuple[Path, ...]) -> str | None:
        target = source.parent / ref
        real = Path(os.path.realpath(target))
        reason = self._check(ref, target, real, depth, stack)
        if reason is not None:
            return self._refuse(reason, ref, real, source)
        try:
            content = read_text(real)
        except NotTextError:
            return self._refuse(RefusalReason.NOT_TEXT, ref, real, source)
        except OSError:
            return self._refuse(RefusalReason.UNREADABLE, ref, real, source)
        cost = len(content.encode()) + _WRAP_OVERHEAD + 2 * len(ref.encode())
        if cost > self._budget:
            return self._refuse(RefusalReason.IMPORT_BUDGET, ref, real, source)
        self._budget -= cost
        self.budget_used += cost
        self.imports.append(ImportedFile(ref, real, source, depth + 1, len(content.encode())))
        return wrap(ref, self._expand(content, real, depth + 1, (*stack, real)))

    def _check(
        self, ref: str, target: Path, real: Path, depth: int, stack: tuple[Path, ...]
    ) -> RefusalReason | None:
        if depth >= MAX_DEPTH:
            return RefusalReason.DEPTH_LIMIT
        if self._operations >= MAX_REFERENCE_OPERATIONS:
            return RefusalReason.OPERATION_LIMIT
        self._operations += 1
        if ref.startswith("/"):
            return RefusalReason.ABSOLUTE_PATH
        if real == self._boundary or not real.is_relative_to(self._boundary):
            return RefusalReason.OUTSIDE_BOUNDARY
        if ".git" in PurePosixPath(ref).parts or self._in_git_metadata(real):
            return RefusalReason.GIT_METADATA
        if not real.exists():
            return RefusalReason.MISSING
        if not real.is_file():
            return RefusalReason.NOT_A_FILE
        lexical = Path(os.path.normpath(target))
        if self._ignore.is_ignored(real) or self._ignore.is_ignored(lexical):
            return RefusalReason.GITIGNORED
        if real in stack:
            return RefusalReason.CYCLE
        if real.stat().st_size + _WRAP_OVERHEAD > self._budget:
            return RefusalReason.IMPORT_BUDGET
        return None

    def _in_git_metadata(self, real: Path) -> bool:
        rel = real.relative_to(self._boundary)
        if ".git" in rel.parts:
            return True
        directory = self._boundary
        for part in rel.parts[:-1]:
            directory = directory / part
            if _is_git_dir(directory):
                return True
        return False

    def _refuse(self, reason: RefusalReason, ref: str, path: Path, source: Path) -> str | None:
        """Record and log a refusal (those over the budget are named together by the
        loader, in one warning); returns None so callers can `return` it."""
        level = logging.INFO if reason is RefusalReason.IMPORT_BUDGET else logging.WARNING
        logger.log(level, "hint import @%s in %s left as written: %s", ref, source, reason)
        self.refusals.append(Refusal(reason, path, ref=ref, source=source))
        return None


def _is_git_dir(directory: Path) -> bool:
    """A bare repository or a worktree's private git dir, wherever it sits."""
    if (directory / "commondir").is_file():
        return True
    return (
        (directory / "HEAD").is_file()
        and (directory / "objects").is_dir()
        and (directory / "refs").is_dir()
    )
