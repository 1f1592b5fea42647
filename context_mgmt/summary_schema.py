"""The JSON schema of the structured compaction summary (reference §5), the document the
built-in `compaction.md` asks the model for and `StructuredSummary.parse` reads.

Every field is optional; lists are ordered most important first. A key the schema does not
name is not dropped: `StructuredSummary.extra` keeps it and the built-in
`compaction_summary.md` shows it under "Other Notes" (so a customised prompt can ask for
more). Decoding is lenient (`structured.py`): a string where a list is expected becomes a
one-item list, objects inside lists become `key: value` text.
"""

from __future__ import annotations

from typing import Any

_LIST = {"type": "array", "items": {"type": "string"}}

STRUCTURED_SUMMARY_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "StructuredSummary",
    "type": "object",
    "properties": {
        "user_intent": {
            **_LIST,
            "description": "each goal or request the user stated, with what would count as done",
        },
        "technical_concepts": {
            **_LIST,
            "description": "languages, libraries, tools, conventions and constraints in play",
        },
        "files": {
            "type": "array",
            "description": "files read or changed",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "summary": {
                        "type": "string",
                        "description": "what was read or changed in it, and why",
                    },
                    "key_code": {
                        "type": ["string", "null"],
                        "description": "short code the work depends on",
                    },
                },
            },
        },
        "errors_and_fixes": {
            **_LIST,
            "description": "each error, its message quoted exactly, and how it was fixed",
        },
        "problem_solving": {
            **_LIST,
            "description": "problems worked through, approaches tried or rejected, and why",
        },
        "user_messages": {
            **_LIST,
            "description": "every message the user wrote (not tool output), close to verbatim",
        },
        "pending_tasks": {**_LIST, "description": "work asked for that is not done yet"},
        "current_work": {
            "type": ["string", "null"],
            "description": "what was being done right before the summary, precisely",
        },
        "next_step": {
            "type": ["string", "null"],
            "description": "the next step, in line with the user's latest request",
        },
    },
    "additionalProperties": True,
}
"""JSON schema (draft 2020-12) of the summary document; unknown keys are allowed and kept."""
