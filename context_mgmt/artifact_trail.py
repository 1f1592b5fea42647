"""The artifact trail: what the session's own tool events say the work touched.

Built from tool requests and their results, never from the model's memory: files read,
created and edited (with how many lines changed), commands run with their exit codes, the
first line of every error, and test commands that failed and later passed. It travels with
every summary (rendered by `compaction_summary.md`, merged into the summary's `files`), so a
compaction cannot forget that `src/parser.py` was edited or that `pytest` still fails.

Recognised tool shapes (by full name or the part after the last `__`):

- files: gosling's `read`/`write`/`edit`, Claude Code's `Read`/`Write`/`Edit`/`MultiEdit`,
  `str_replace_editor`-style editors (`view`, `create`, `str_replace`, `insert`), and the
  common `read_file`/`write_file`/`edit_file` names;
- commands: any tool with a string `command` argument that is not an editor (`shell`,
  `Bash`, `bash`, `execute_bash`, ...). The exit code is read from the result: `Exit code: N`
  (gosling, Claude Code), `<returncode>N</returncode>` (mini-swe-agent), `[The command
  completed with exit code N.]` (OpenHands); a result without one is 0 unless it is flagged
  as an error.

The trail is bounded (`bounded`): the most recent entries of each kind are kept and the
older ones folded into counts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse

MAX_FILES = 25
MAX_COMMANDS = 20
MAX_ERRORS = 12
MAX_TEST_FIXES = 8
COMMAND_CHARS = 160
ERROR_CHARS = 200

_READ = frozenset({"read", "read_file", "view", "view_file", "file_read", "open_file", "Read"})
_WRITE = frozenset({"write", "write_file", "create_file", "file_write", "Write"})
_EDIT = frozenset(
    {"edit", "edit_file", "file_edit", "str_replace", "Edit", "MultiEdit", "apply_patch"}
)
_EDITORS = frozenset({"str_replace_editor", "text_editor", "str_replace_based_edit_tool"})
_PATH_KEYS = ("path", "file_path", "filename", "notebook_path")
_OLD_KEYS = ("old", "old_string", "old_str")
_NEW_KEYS = ("new", "new_string", "new_str", "insert_text")
_CONTENT_KEYS = ("content", "file_text", "contents", "text")

_EXIT_PATTERNS = (
    re.compile(r"^Exit code:? (-?\d+)", re.MULTILINE),
    re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>"),
    re.compile(r"\[The command completed with exit code (-?\d+)\.?\]"),
    re.compile(r"\[Command finished with exit code (-?\d+)\]"),
)
_NOISE_LINE = re.compile(
    r"^(Exit code:? -?\d+|<returncode>.*|</?output>|--- std(out|err).*---|\[The command .*\])$"
)
_ERROR_NAME_LINE = re.compile(r"^(?:E\s+)?[A-Za-z_][\w.]*(?:Error|Exception|Failure)\b.*")
_ERROR_WORD_LINE = re.compile(
    r"(?:^|\s)(?:error(?:\[\w+\])?:|fatal:|FAILED\b|panicked at|Segmentation fault|"
    r"command not found|No such file or directory)",
    re.IGNORECASE,
)
_TEST_COMMAND = re.compile(
    r"\b(pytest|py\.test|cargo (?:test|nextest)|go test|npm (?:run )?test|yarn test|pnpm test|"
    r"jest|vitest|tox|nox|make (?:test|check)|ctest|runtests\.py|manage\.py test|mvn test|"
    r"gradle test|rspec|unittest)\b|\bpython[\d.]* (?:-m )?\S*(?:test|reproduce)\S*\.py\b"
)
_FAILED_TEST = re.compile(
    r"^(?:FAILED|ERROR) (\S+::\S+)|^test (\S+) \.\.\. FAILED|^--- FAIL: (\S+)|^FAIL: (\S+)",
    re.MULTILINE,
)
_HEREDOC_WRITE = re.compile(
    r"^(?:cd \S+ && )?cat\s+>\s*(?P<path>[^\s<>|&;]+)\s*<<-?\s*['\"]?(?P<tag>\w+)['\"]?\n"
    r"(?P<body>.*?)\n(?P=tag)\s*$",
    re.DOTALL,
)
_SHELL_READ = re.compile(
    r"^(?:cd \S+ && )?(?:cat|nl(?: -\w+)*|head(?: -n? ?\d+)?|tail(?: -n? ?\d+)?|"
    r"sed -n '[\d,p;]+')\s+(?P<path>[^\s<>|&;*]+)\s*$"
)
_CREATED = re.compile(r"\b(created|creating|wrote|overwrote|updated|has been updated)\b", re.I)
_PIPE_TAIL = re.compile(r"\s*(2>&1|\|\s*(tail|head|grep|less|cat)\b.*)$")


@dataclass(frozen=True)
class FileTouch:
    """One file and what the session did to it, in the order it was first touched."""

    path: str
    reads: int = 0
    created: bool = False
    writes: int = 0
    edits: int = 0
    lines_added: int = 0
    lines_removed: int = 0

    @property
    def activity(self) -> str:
        """`read 2×; edited 3× (+12/−4 lines)`: what happened, in one line."""
        parts: list[str] = []
        if self.created:
            parts.append("created" + (f", rewritten {self.writes - 1}×" if self.writes > 1 else ""))
        elif self.writes:
            parts.append(f"rewritten {self.writes}×" if self.writes > 1 else "rewritten")
        if self.edits:
            parts.append(f"edited {self.edits}×" if self.edits > 1 else "edited")
        if self.writes or self.edits:
            parts[-1] += f" (+{self.lines_added}/−{self.lines_removed} lines)"
        if self.reads:
            parts.insert(0, f"read {self.reads}×" if self.reads > 1 else "read")
        return "; ".join(parts)

    @property
    def changed(self) -> bool:
        return bool(self.writes or self.edits)


@dataclass(frozen=True)
class CommandRun:
    command: str
    """The command's first line, clipped to `COMMAND_CHARS`."""
    exit_code: int | None
    """None: the result said nothing and was flagged as an error."""

    @property
    def failed(self) -> bool:
        return self.exit_code != 0

    @property
    def outcome(self) -> str:
        return "failed" if self.exit_code is None else f"exit {self.exit_code}"


@dataclass(frozen=True)
class TestFix:
    """A test command that failed and, later in the session, passed."""

    command: str
    failed_runs: int
    tests: tuple[str, ...] = ()
    """Failing test names its failed runs reported (a few)."""


@dataclass(frozen=True)
class ArtifactTrail:
    files: tuple[FileTouch, ...] = ()
    commands: tuple[CommandRun, ...] = ()
    errors: tuple[str, ...] = ()
    """The first line of each distinct error, oldest first."""
    tests_fixed: tuple[TestFix, ...] = ()
    folded_files: int = 0
    folded_commands: int = 0
    folded_failed_commands: int = 0
    folded_errors: int = 0
    recent_files: tuple[str, ...] = ()
    """Every path of `files` (folded ones too), most recently touched first: what a
    compaction re-reads from disk (`agent.after_compaction`)."""

    def is_empty(self) -> bool:
        return not (self.files or self.commands or self.errors or self.tests_fixed)

    def bounded(
        self,
        *,
        max_files: int = MAX_FILES,
        max_commands: int = MAX_COMMANDS,
        max_errors: int = MAX_ERRORS,
    ) -> ArtifactTrail:
        """The most recent entries of each kind; older ones folded into counts. Changed files
        are kept before files that were only read."""
        files = self.files
        folded_files = self.folded_files
        if len(files) > max_files:
            changed = [f for f in files if f.changed][-max_files:]
            room = max_files - len(changed)
            read_only = [f for f in files if not f.changed][-room:] if room else []
            keep = {id(f) for f in [*changed, *read_only]}
            folded_files += len(files) - len(keep)
            files = tuple(f for f in files if id(f) in keep)
        commands = self.commands
        folded_commands, folded_failed = self.folded_commands, self.folded_failed_commands
        if len(commands) > max_commands:
            old = commands[: len(commands) - max_commands]
            folded_commands += len(old)
            folded_failed += sum(1 for c in old if c.failed)
            commands = commands[-max_commands:]
        errors = self.errors
        folded_errors = self.folded_errors
        if len(errors) > max_errors:
            folded_errors += len(errors) - max_errors
            errors = errors[-max_errors:]
        return replace(
            self,
            files=files,
            commands=commands,
            errors=errors,
            tests_fixed=self.tests_fixed[-MAX_TEST_FIXES:],
            folded_files=folded_files,
            folded_commands=folded_commands,
            folded_failed_commands=folded_failed,
            folded_errors=folded_errors,
        )

    def template_context(self) -> dict[str, Any]:
        """What `compaction_summary.md` gets as `trail`."""
        return {
            "files": [{"path": f.path, "activity": f.activity} for f in self.files],
            "commands": [{"command": c.command, "outcome": c.outcome} for c in self.commands],
            "errors": list(self.errors),
            "tests_fixed": [
                {"command": t.command, "failed_runs": t.failed_runs, "tests": list(t.tests)}
                for t in self.tests_fixed
            ],
            "folded_files": self.folded_files,
            "folded_commands": self.folded_commands,
            "folded_failed_commands": self.folded_failed_commands,
            "folded_errors": self.folded_errors,
        }


def build_trail(messages: Iterable[Message]) -> ArtifactTrail:
    """The whole trail of `messages` (hidden ones included: they are the session's own
    record), unbounded; call `.bounded()` for the version that travels with a summary."""
    requests: dict[str, ToolRequest] = {}
    files: dict[str, FileTouch] = {}
    commands: list[CommandRun] = []
    errors: dict[str, None] = {}
    test_runs: dict[str, list[tuple[bool, tuple[str, ...]]]] = {}
    recent: dict[str, None] = {}
    for message in messages:
        for part in message.content:
            if isinstance(part, ToolRequest):
                requests[part.id] = part
            elif isinstance(part, ToolResponse):
                request = requests.pop(part.id, None)
                if request is None:
                    continue
                output = _text(part)
                path = _record(request, part.is_error, output, files, commands, errors, test_runs)
                if path is not None:
                    recent.pop(path, None)
                    recent[path] = None
    fixes = [fix for key, runs in test_runs.items() if (fix := _test_fix(key, runs)) is not None]
    return ArtifactTrail(
        files=tuple(files.values()),
        commands=tuple(commands),
        errors=tuple(errors),
        tests_fixed=tuple(fixes),
        recent_files=tuple(reversed(recent)),
    )


def _record(
    request: ToolRequest,
    is_error: bool,
    output: str,
    files: dict[str, FileTouch],
    commands: list[CommandRun],
    errors: dict[str, None],
    test_runs: dict[str, list[tuple[bool, tuple[str, ...]]]],
) -> str | None:
    """Record one answered call; the path of the file it touched, if any."""
    args = request.arguments
    kind = _file_kind(request)
    if kind is not None:
        path = _string(args, _PATH_KEYS)
        if is_error:
            _add_error(errors, output)
        elif path is not None:
            files[path] = _touched(files.get(path, FileTouch(path)), kind, args, output)
            return path
        return None
    command = args.get("command")
    if not isinstance(command, str) or not command.strip():
        if is_error:
            _add_error(errors, output)
        return None
    exit_code = _exit_code(output, is_error)
    touched = _shell_file(command.strip(), files) if exit_code == 0 else None
    run = CommandRun(_clip(command.strip().splitlines()[0], COMMAND_CHARS), exit_code)
    commands.append(run)
    if run.failed:
        _add_error(errors, output)
    if _TEST_COMMAND.search(command):
        names = tuple(n for groups in _FAILED_TEST.findall(output) for n in groups if n)
        test_runs.setdefault(_test_key(command), []).append((not run.failed, names[:5]))
    return touched


def _shell_file(command: str, files: dict[str, FileTouch]) -> str | None:
    """The two shell idioms that say plainly which file they touch: a heredoc written with
    `cat > path << EOF` and a whole-file `cat`/`head`/`tail`/`nl`/`sed -n` read."""
    written = _HEREDOC_WRITE.match(command)
    if written is not None:
        path = written.group("path")
        args = {"content": written.group("body")}
        files[path] = _touched(files.get(path, FileTouch(path)), "write", args, "")
        return path
    read = _SHELL_READ.match(command)
    if read is None:
        return None
    path = read.group("path")
    files[path] = _touched(files.get(path, FileTouch(path)), "read", {}, "")
    return path


def _file_kind(request: ToolRequest) -> str | None:
    short = request.name.rsplit("__", 1)[-1]
    names = {request.name, short}
    if names & _EDITORS:
        sub = request.arguments.get("command")
        return {"view": "read", "create": "write", "str_replace": "edit", "insert": "edit"}.get(
            sub if isinstance(sub, str) else ""
        )
    if names & _WRITE:
        return "write"
    if names & _EDIT:
        return "edit"
    if names & _READ:
        return "read"
    return None


def _touched(touch: FileTouch, kind: str, args: dict[str, Any], output: str) -> FileTouch:
    if kind == "read":
        return replace(touch, reads=touch.reads + 1)
    if kind == "write":
        content = _string(args, _CONTENT_KEYS) or ""
        said = _CREATED.search(output[:300])
        if said is not None:
            new = said.group(0).lower().startswith("creat")
        else:  # the result does not say: new unless the session saw the file before
            new = not (touch.reads or touch.writes or touch.edits)
        return replace(
            touch,
            created=touch.created or (new and not touch.writes),
            writes=touch.writes + 1,
            lines_added=touch.lines_added + _lines(content),
        )
    pieces = args.get("edits")
    changes = pieces if isinstance(pieces, list) else [args]
    added = removed = 0
    for change in changes:
        if isinstance(change, dict):
            removed += _lines(_string(change, _OLD_KEYS) or "")
            added += _lines(_string(change, _NEW_KEYS) or "")
    return replace(
        touch,
        edits=touch.edits + 1,
        lines_added=touch.lines_added + added,
        lines_removed=touch.lines_removed + removed,
    )


def _exit_code(output: str, is_error: bool) -> int | None:
    for pattern in _EXIT_PATTERNS:
        found = pattern.search(output)
        if found:
            return int(found.group(1))
    return None if is_error else 0


def _add_error(errors: dict[str, None], output: str) -> None:
    line = first_error_line(output)
    if line:
        errors[line] = None


def first_error_line(output: str) -> str | None:
    """The line that names the error: an `...Error: ...` line if there is one, else a line
    with `error:`, `fatal:`, `FAILED` and the like, else the first line with any text."""
    lines = [ln.strip() for ln in output.splitlines()]
    lines = [ln for ln in lines if ln and not _NOISE_LINE.match(ln)]
    for pattern in (_ERROR_NAME_LINE, _ERROR_WORD_LINE):
        for line in lines:
            if pattern.search(line):
                return _clip(line, ERROR_CHARS)
    return _clip(lines[0], ERROR_CHARS) if lines else None


def _test_key(command: str) -> str:
    key = " ".join(command.split())
    while True:
        shorter = _PIPE_TAIL.sub("", key)
        if shorter == key:
            return key
        key = shorter


def _test_fix(key: str, runs: Sequence[tuple[bool, tuple[str, ...]]]) -> TestFix | None:
    """Failed at least once and passed on its last run."""
    failed = [names for passed, names in runs if not passed]
    if not failed or not runs[-1][0]:
        return None
    names = tuple(dict.fromkeys(n for group in failed for n in group))[:5]
    return TestFix(_clip(key, COMMAND_CHARS), len(failed), names)


def _text(part: ToolResponse) -> str:
    return "\n".join(p.text for p in part.content if isinstance(p, TextContent))


def _string(args: dict[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _lines(text: str) -> int:
    return len(text.splitlines()) if text else 0


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
