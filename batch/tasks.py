"""The task file: one JSON object per line, each a headless run. Read and checked whole
before anything runs, so a typo on line 90 never surfaces after 89 tasks have spent money.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
"""Ids name files (`sessions/<id>.jsonl`, `work/<id>`), so only filename-safe characters."""

MAX_LINE_BYTES = 1_000_000
"""A task line bigger than this is a mistake (a whole repository pasted into a prompt)."""


class TaskSpec(BaseModel):
    """One line of the task file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    """Names the result line, the session file and the working directory."""
    prompt: str = Field(min_length=1)
    working_dir: str | None = None
    """A directory copied into the task's own fresh working directory (never worked in)."""
    repo: str | None = None
    """A git repository (URL or path) cloned into the task's fresh working directory."""
    ref: str | None = None
    """Branch, tag or commit of `repo` to check out (default: its default branch)."""
    setup: str | None = None
    """A shell command run in the working directory before the agent starts."""
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    max_turns: int | None = Field(default=None, ge=1)
    timeout_s: float | None = Field(default=None, gt=0)
    """Wall-clock limit of the whole task, setup included; then it is cancelled (exit 124)."""
    mode: str | None = None
    """As `gosling run --mode`."""
    extensions: tuple[str, ...] = ()
    """MCP servers, as `gosling run --with-extension` takes them."""

    @field_validator("id")
    @classmethod
    def _safe_id(cls, value: str) -> str:
        if not TASK_ID.match(value):
            raise ValueError(
                "id must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"
            )
        return value

    @field_validator("mode")
    @classmethod
    def _known_mode(cls, value: str | None) -> str | None:
        from gosling.agent.cli.options import MODES

        if value is not None and value not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        return value

    @field_validator("prompt")
    @classmethod
    def _non_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("prompt is blank")
        return value

    @model_validator(mode="after")
    def _one_place(self) -> TaskSpec:
        if self.working_dir is not None and self.repo is not None:
            raise ValueError("give working_dir or repo, not both")
        if self.ref is not None and self.repo is None:
            raise ValueError("ref needs repo")
        return self


class TaskFileError(Exception):
    """The task file has bad lines; `problems` lists each as `FILE:LINE: what is wrong`."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"])
        message = str(item["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def _check_places(task: TaskSpec, base: Path) -> TaskSpec:
    """Relative paths are relative to the task file; local ones must exist now."""
    if task.working_dir is not None:
        path = (base / task.working_dir).expanduser().resolve()
        if not path.is_dir():
            raise ValueError(f"working_dir {task.working_dir} is not a directory ({path})")
        task = task.model_copy(update={"working_dir": str(path)})
    if task.repo is not None and "://" not in task.repo and not _looks_remote(task.repo):
        path = (base / task.repo).expanduser().resolve()
        if not path.exists():
            raise ValueError(f"repo {task.repo} does not exist ({path})")
        task = task.model_copy(update={"repo": str(path)})
    for spec in task.extensions:
        from gosling.agent.tools.extension_config import parse_extension_spec

        parse_extension_spec(spec)
    return task


def _looks_remote(repo: str) -> bool:
    """scp-like git addresses (`git@host:owner/repo`)."""
    head = repo.split("/", 1)[0]
    return ":" in head and not Path(repo).exists()


def parse_tasks(lines: Iterable[str], source: str, base: Path) -> list[TaskSpec]:
    """Every task, or `TaskFileError` naming every bad line (blank lines and `#` comments
    are skipped)."""
    tasks: list[TaskSpec] = []
    problems: list[str] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{source}:{number}"
        if len(line) > MAX_LINE_BYTES:
            problems.append(f"{where}: line longer than {MAX_LINE_BYTES:,} bytes")
            continue
        try:
            data: Any = json.loads(line)
        except (ValueError, RecursionError) as exc:
            problems.append(f"{where}: not JSON ({exc})")
            continue
        if not isinstance(data, dict):
            problems.append(f"{where}: expected a JSON object, got {type(data).__name__}")
            continue
        try:
            task = _check_places(TaskSpec.model_validate(data), base)
        except ValidationError as exc:
            problems.append(f"{where}: {_describe(exc)}")
            continue
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
            continue
        if task.id in first_line:
            problems.append(
                f"{where}: duplicate id {task.id!r} (first on line {first_line[task.id]})"
            )
            continue
        first_line[task.id] = number
        tasks.append(task)
    if problems:
        raise TaskFileError(problems)
    if not tasks:
        raise TaskFileError([f"{source}: no tasks (one JSON object per line)"])
    return tasks


def load_tasks(path: Path) -> list[TaskSpec]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFileError([f"{path}: cannot read the task file ({exc})"]) from exc
    return parse_tasks(text.splitlines(), str(path), path.resolve().parent)
