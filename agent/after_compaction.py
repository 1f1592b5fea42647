"""What a compaction brings back from disk: the hints of the directories still in play and
the files the session touched last.

A summary says *that* `src/parser.py` was edited; the next step usually needs *what is in it*.
After every compaction of a session, one agent-only message follows the summary with:

- the subdirectory hint files (AGENTS.md, .goosehints) of the directories the most recently
  touched files are in, read again: the hints messages that first carried them are now
  hidden behind the summary, and the tracker would never send them a second time;
- the most recently touched files (the artifact trail's order: read, written or edited by a
  file tool, or by the plain `cat`/`sed -n` and heredoc idioms), as they are on disk now,
  newest first: at most `compaction_reread_files` files and `compaction_reread_tokens`
  tokens (never more than a tenth of the window); the last file that does not fit whole is
  cut at a line, with a note.

A file is re-read only as the file tools would show it: inside the working dir (symlinks
resolved), not in `.git`, not a credential location (`~/.ssh`, `~/.netrc`, ... and config
`sandbox_hide`), text, and redacted like any tool output. A file that is gone or refused is
left out silently: the trail still names it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gosling.context_mgmt.artifact_trail import build_trail
from gosling.context_mgmt.tokens import TokenCounter
from gosling.conversation import Message
from gosling.hints import SubdirectoryHintTracker
from gosling.redact import redact

RESTORED_KIND = "restored_context"
WINDOW_SHARE = 0.1
"""The re-read files never take more than this share of the context window."""
MIN_CUT_TOKENS = 400
"""A file that does not fit whole is shown cut only when at least this much room is left."""
SNIFF_BYTES = 8192
READ_LIMIT_BYTES = 4_000_000
"""Files larger than this are not re-read (whatever the budget, most of it would be cut)."""
HINT_DIRECTORY_FILES = 10
"""The hints of the directories of this many most recently touched files come back."""


@dataclass(frozen=True)
class RestoredFile:
    path: str
    tokens: int
    cut: bool = False


@dataclass(frozen=True)
class Restored:
    """What came back after one compaction; `message` is None when nothing did."""

    message: Message | None
    files: tuple[RestoredFile, ...] = ()
    hint_directories: tuple[str, ...] = ()
    tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "files": [
                {"path": f.path, "tokens": f.tokens, **({"cut": True} if f.cut else {})}
                for f in self.files
            ],
            "hint_directories": list(self.hint_directories),
            "tokens": self.tokens,
        }


def restore_after_compaction(
    messages: Sequence[Message],
    working_dir: Path,
    hints: SubdirectoryHintTracker,
    counter: TokenCounter,
    *,
    max_files: int,
    max_tokens: int,
    context_limit: int,
    hidden: Iterable[Path] = (),
) -> Restored:
    """The message that follows a compaction of `messages` (the whole session, hidden
    originals included). `hidden` are the credential locations nothing may re-read."""
    wd = Path(os.path.realpath(working_dir))
    recent = build_trail(messages).recent_files
    in_play = [_resolve(path, wd).parent for path in recent[:HINT_DIRECTORY_FILES]]
    hint_entries = hints.hints_in_play(in_play, wd)
    budget = min(max_tokens, int(context_limit * WINDOW_SHARE))
    blocked = tuple(Path(os.path.realpath(p)) for p in hidden)
    files: list[RestoredFile] = []
    blocks: list[str] = []
    room = budget
    for path in recent:
        if len(files) >= max_files or room < MIN_CUT_TOKENS:
            break
        text = _readable(_resolve(path, wd), wd, blocked)
        if text is None:
            continue
        shown, tokens, cut = _fit(redact(text), room, counter)
        if not shown:
            continue
        room -= tokens
        files.append(RestoredFile(path, tokens, cut))
        blocks.append(_file_block(path, shown, text, cut))
    if not hint_entries and not files:
        return Restored(None)
    parts = ["[Restored after the compaction: read from disk just now, not from the summary.]"]
    if hint_entries:
        parts.append("## Hint files of the directories still in play")
        parts.extend(content for _, content in hint_entries)
    if files:
        parts.append("## The files touched most recently, newest first, as they are on disk now")
        parts.extend(blocks)
    text = "\n\n".join(parts)
    message = Message.user(text).agent_only().with_kind(RESTORED_KIND)
    directories = tuple(key.removeprefix("subdir_hints:") for key, _ in hint_entries)
    return Restored(message, tuple(files), directories, counter.count_message(message))


def _resolve(path: str, wd: Path) -> Path:
    return Path(os.path.realpath(wd / os.path.expanduser(path)))


def _readable(real: Path, wd: Path, blocked: Sequence[Path]) -> str | None:
    """The text of `real` when the file tools could show it, else None."""
    if not real.is_relative_to(wd) or ".git" in real.relative_to(wd).parts:
        return None
    if any(real.is_relative_to(b) for b in blocked):
        return None
    try:
        if not real.is_file() or real.stat().st_size > READ_LIMIT_BYTES:
            return None
        data = real.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _fit(text: str, room: int, counter: TokenCounter) -> tuple[str, int, bool]:
    """`text` whole when it fits in `room` tokens, else its longest head of whole lines that
    does (empty when `room` is too small to be worth a cut)."""
    tokens = counter.count_text(text)
    if tokens <= room:
        return text, tokens, False
    if room < MIN_CUT_TOKENS:
        return "", 0, True
    head = text[: max(1, len(text) * room // tokens)]
    while True:
        head = head[: head.rfind("\n") + 1] if "\n" in head else head
        tokens = counter.count_text(head)
        if tokens <= room or not head:
            return head, tokens, True
        head = head[: len(head) * 9 // 10]


def _file_block(path: str, shown: str, whole: str, cut: bool) -> str:
    body = shown if shown.endswith("\n") else shown + "\n"
    note = ""
    if cut:
        kept, total = shown.count("\n"), whole.count("\n") + (not whole.endswith("\n"))
        note = f"[cut: lines 1-{kept} of {total} shown; view the file for the rest]\n"
    return f'<file path="{path}">\n{body}{note}</file>'
