"""gosling's own session export, read by `sessions.jsonl` and reported like the other formats."""

from __future__ import annotations

from collections import Counter

from gosling.sessions import jsonl
from gosling.sessions.importers.builder import count_messages
from gosling.sessions.importers.transcript import ImportedTranscript


def looks_like_gosling_jsonl(head: str) -> bool:
    return jsonl.looks_like_jsonl(head)


def parse_gosling_jsonl(text: str, source: str) -> list[ImportedTranscript]:
    """Delegates to the store's own reader, which refuses broken lines: an export is meant to
    be lossless, so damage should be noticed rather than patched over."""
    snapshot = jsonl.parse_jsonl(text, source)
    lines = sum(1 for line in text.splitlines() if line.strip())
    kinds = Counter({"session": 1, "message": len(snapshot.messages), "usage": len(snapshot.usage)})
    unknown = lines - sum(kinds.values())
    facts = {
        "session_id": snapshot.id,
        "cwd": str(snapshot.working_dir),
        "provider": snapshot.provider,
        "model": snapshot.model,
    }
    return [
        ImportedTranscript(
            source_format="gosling-jsonl",
            messages=tuple(snapshot.messages),
            stats=count_messages(
                snapshot.messages,
                records=lines,
                record_kinds=kinds,
                skipped={"unknown line type": unknown},
            ),
            title=snapshot.name or None,
            source=source,
            info={k: v for k, v in facts.items() if v},
        )
    ]
