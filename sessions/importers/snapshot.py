"""Turn an imported transcript into a session the store can `restore`."""

from __future__ import annotations

from pathlib import Path

from gosling.sessions.importers.transcript import ImportedTranscript
from gosling.sessions.records import SessionSnapshot

EXTENSION_KEY = "import"


def to_snapshot(transcript: ImportedTranscript) -> SessionSnapshot:
    """A new session holding the transcript's messages.

    The system prompt and the source facts go to extension data under `"import"`, since a
    gosling session has no slot for another agent's system prompt.
    """
    created = next((m.created for m in transcript.messages if m.created), None)
    updated = max((m.created for m in transcript.messages), default=0) or None
    return SessionSnapshot(
        name=transcript.title or Path(transcript.source).stem or "imported transcript",
        working_dir=Path(transcript.info.get("cwd", ".")),
        messages=transcript.messages,
        model=transcript.info.get("model"),
        created_at=created,
        updated_at=updated,
        extension_data={
            EXTENSION_KEY: {
                "format": transcript.source_format,
                "source": transcript.source,
                "system_prompt": transcript.system_prompt,
                "info": dict(transcript.info),
            }
        },
    )
