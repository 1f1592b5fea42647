"""Importers for other agents' transcripts into gosling's message vocabulary.

`load_transcripts(path)` sniffs the format from the content and returns one
`ImportedTranscript` per run in the file; `to_snapshot` turns one into a session for the store.
"""

from gosling.sessions.importers.dispatch import detect_format, load_transcripts, parse_transcripts
from gosling.sessions.importers.mini_swe_agent import EXIT_KIND
from gosling.sessions.importers.snapshot import to_snapshot
from gosling.sessions.importers.transcript import (
    FORMATS,
    ImportedTranscript,
    ImportStats,
    TranscriptFormat,
)

__all__ = [
    "EXIT_KIND",
    "FORMATS",
    "ImportStats",
    "ImportedTranscript",
    "TranscriptFormat",
    "detect_format",
    "load_transcripts",
    "parse_transcripts",
    "to_snapshot",
]
