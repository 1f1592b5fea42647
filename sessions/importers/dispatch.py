"""Pick the importer for a file by what is in it, not by its name.

A whole-file JSON document is classified by its shape (mini-swe-agent trajectory, OpenHands
run or event list, chat message list); JSON Lines by the first records that say what they are
(a gosling session header, Claude Code records, OpenHands runs or events, chat messages).
Comment lines and undecodable lines before them do not get in the way.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from gosling.sessions.errors import ImportFailed
from gosling.sessions.importers import claude_code, mini_swe_agent, openai_chat, openhands
from gosling.sessions.importers._json import iter_json_lines
from gosling.sessions.importers.gosling_jsonl import looks_like_gosling_jsonl, parse_gosling_jsonl
from gosling.sessions.importers.transcript import FORMATS, ImportedTranscript, TranscriptFormat
from gosling.sessions.json_limits import load_json

_SNIFF_LINES = 50
_NOT_A_DOCUMENT: Final = object()


def detect_format(path: Path | str) -> TranscriptFormat:
    """The transcript format of the file at `path`; `ImportFailed` when it is none of them."""
    path = Path(path)
    fmt, _ = _sniff(_read(path), str(path))
    return fmt


def load_transcripts(
    path: Path | str, *, format: TranscriptFormat | None = None
) -> list[ImportedTranscript]:
    """Every transcript in the file at `path` (OpenHands files can hold several runs)."""
    path = Path(path)
    return parse_transcripts(_read(path), source=str(path), format=format)


def parse_transcripts(
    text: str, *, source: str = "<text>", format: TranscriptFormat | None = None
) -> list[ImportedTranscript]:
    """Every transcript in `text`; `format` skips sniffing."""
    text = text.removeprefix("\ufeff")
    if format is None:
        format, document = _sniff(text, source)
    elif format not in FORMATS:
        raise ImportFailed(f"unknown transcript format {format!r}; known: {', '.join(FORMATS)}")
    else:
        document = _decode_document(text)
    return _PARSERS[format](text, document, source)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFailed(f"{path} is not UTF-8 text, so it is no transcript: {exc}") from exc
    except OSError as exc:
        raise ImportFailed(f"cannot read {path}: {exc.strerror or exc}") from exc


def _decode_document(text: str) -> Any:
    """The file as one JSON value, or `_NOT_A_DOCUMENT` (JSON Lines, comments, damage)."""
    try:
        return load_json(text)
    except ValueError:
        return _NOT_A_DOCUMENT


def _sniff(text: str, source: str) -> tuple[TranscriptFormat, Any]:
    text = text.removeprefix("\ufeff")
    if looks_like_gosling_jsonl(text[:4096]):
        return "gosling-jsonl", _NOT_A_DOCUMENT
    document = _decode_document(text)
    if document is not _NOT_A_DOCUMENT:
        fmt = _document_format(document)
        if fmt is None:
            raise ImportFailed(
                f"{source} is JSON but not a transcript gosling can import; expected one of: "
                f"{', '.join(FORMATS)}"
            )
        return fmt, document
    for value in itertools.islice(iter_json_lines(text), _SNIFF_LINES):
        fmt = _line_format(value)
        if fmt is not None:
            return fmt, _NOT_A_DOCUMENT
    raise ImportFailed(
        f"{source} is not a transcript gosling can import (no JSON document and no recognisable "
        f"JSON Lines records); supported formats: {', '.join(FORMATS)}"
    )


def _document_format(document: Any) -> TranscriptFormat | None:
    if mini_swe_agent.looks_like_trajectory(document):
        return "mini-swe-agent"
    if openhands.is_run(document) or (
        isinstance(document, list) and document and openhands.is_event(document[0])
    ):
        return "openhands"
    if openai_chat.chat_messages_of(document) is not None:
        return "openai-chat"
    return _line_format(document)  # a JSON Lines file of a single record


def _line_format(value: Any) -> TranscriptFormat | None:
    if claude_code.looks_like_record(value):
        return "claude-code"
    if openhands.is_run(value) or openhands.is_event(value):
        return "openhands"
    if openai_chat.is_chat_message(value) or openai_chat.chat_messages_of(value) is not None:
        return "openai-chat"
    return None


def _claude_code(text: str, document: Any, source: str) -> list[ImportedTranscript]:
    return claude_code.parse_claude_code(text, source)


def _mini_swe_agent(text: str, document: Any, source: str) -> list[ImportedTranscript]:
    if document is _NOT_A_DOCUMENT:
        raise ImportFailed(
            f"{source} is not a JSON document, so it is no mini-swe-agent trajectory"
        )
    return mini_swe_agent.parse_mini_swe_agent(document, source)


def _openhands(text: str, document: Any, source: str) -> list[ImportedTranscript]:
    if document is _NOT_A_DOCUMENT:
        return openhands.parse_openhands_lines(text, source)
    return openhands.parse_openhands_document(document, source)


def _openai_chat(text: str, document: Any, source: str) -> list[ImportedTranscript]:
    if document is _NOT_A_DOCUMENT or openai_chat.chat_messages_of(document) is None:
        return openai_chat.parse_openai_chat_lines(text, source)
    return openai_chat.parse_openai_chat_document(document, source)


def _gosling_jsonl(text: str, document: Any, source: str) -> list[ImportedTranscript]:
    return parse_gosling_jsonl(text, source)


_PARSERS: dict[TranscriptFormat, Callable[[str, Any, str], list[ImportedTranscript]]] = {
    "claude-code": _claude_code,
    "mini-swe-agent": _mini_swe_agent,
    "openhands": _openhands,
    "openai-chat": _openai_chat,
    "gosling-jsonl": _gosling_jsonl,
}
