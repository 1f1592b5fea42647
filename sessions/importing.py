"""Export and import of whole sessions, with a registry so other tools' formats can plug in.

An importer says whether it recognises a file from its first few kilobytes (`sniff`) and turns
the file's text into a `SessionSnapshot` (`parse`); the store then writes the snapshot in one
transaction. gosling's own JSON Lines format is registered here; importers for other agents'
transcripts register themselves with `register_importer`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from gosling.redact import redact, redact_json
from gosling.sessions import jsonl
from gosling.sessions.errors import ImportFailed
from gosling.sessions.markdown import render_markdown
from gosling.sessions.records import Session, SessionSnapshot
from gosling.sessions.store import SessionStore

ExportFormat = Literal["jsonl", "markdown"]
_SNIFF_CHARS = 4096


def export_session(store: SessionStore, session_id: str, format: ExportFormat = "jsonl") -> str:
    """The session as text: lossless `jsonl`, or `markdown` showing what the user saw."""
    snapshot = store.snapshot(session_id)
    # Stored content is redacted on write; exports redact again for sessions written or
    # imported before a secret (or a key format) was known.
    if format == "jsonl":
        lines = jsonl.dump_jsonl(snapshot).splitlines()
        return "".join(redact_json(line) + "\n" for line in lines)
    if format == "markdown":
        return redact(render_markdown(snapshot))
    raise ValueError(f"unknown export format {format!r}; use 'jsonl' or 'markdown'")


class Importer(Protocol):
    @property
    def name(self) -> str:
        """Short name users pass as `--format`."""
        ...

    def sniff(self, head: str) -> bool:
        """True when the text starting with `head` is in this importer's format."""
        ...

    def parse(self, text: str, source: str) -> SessionSnapshot:
        """The session in `text`; `source` names the file in error messages."""
        ...


JSONL_IMPORTER = "gosling-jsonl"


@dataclass(frozen=True)
class GoslingJsonlImporter:
    name: str = JSONL_IMPORTER

    def sniff(self, head: str) -> bool:
        return jsonl.looks_like_jsonl(head)

    def parse(self, text: str, source: str) -> SessionSnapshot:
        return jsonl.parse_jsonl(text, source)


_IMPORTERS: list[Importer] = [GoslingJsonlImporter()]


def register_importer(importer: Importer) -> None:
    """Add an importer; later registrations are asked first, so they can refine sniffing."""
    _IMPORTERS.insert(0, importer)


def importers() -> tuple[Importer, ...]:
    return tuple(_IMPORTERS)


def parse_session_text(text: str, source: str, *, format: str | None = None) -> SessionSnapshot:
    """Pick the importer (by name, or by sniffing) and parse `text` with it."""
    if format is not None:
        for importer in _IMPORTERS:
            if importer.name == format:
                return importer.parse(text, source)
        known = ", ".join(i.name for i in _IMPORTERS)
        raise ImportFailed(f"unknown import format {format!r}; known formats: {known}")
    head = text[:_SNIFF_CHARS]
    for importer in _IMPORTERS:
        if importer.sniff(head):
            return importer.parse(text, source)
    known = ", ".join(i.name for i in _IMPORTERS)
    raise ImportFailed(f"{source} is not in a session format gosling can import ({known})")


def import_session(store: SessionStore, path: Path | str, *, format: str | None = None) -> Session:
    """Import the file at `path`; the session keeps its id unless that id is taken."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportFailed(f"cannot read {path}: {exc}") from exc
    return store.restore(parse_session_text(text, str(path), format=format))


def import_jsonl(store: SessionStore, path: Path | str) -> Session:
    """Import a file written by `export_session(..., format="jsonl")`."""
    return import_session(store, path, format=JSONL_IMPORTER)
