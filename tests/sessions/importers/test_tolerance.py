"""Real logs are messy: whatever the records hold, an import counts and skips, never crashes."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gosling.sessions import ImportFailed
from gosling.sessions.importers import parse_transcripts

_KEYS = [
    "type", "message", "content", "role", "id", "tool_calls", "tool_call_id", "function",
    "arguments", "name", "input", "text", "thinking", "history", "action", "observation",
    "source", "args", "tool_call_metadata", "model_response", "choices", "cause", "isMeta",
    "isSidechain", "tool_use_id", "is_error", "summary", "sessionId", "parentUuid", "extras",
    "messages", "reasoning_content", "image_url", "url", "success", "timestamp",
]  # fmt: skip
_WORDS = [
    "user", "assistant", "tool", "system", "exit", "text", "tool_use", "tool_result",
    "thinking", "image", "run", "recall", "error", "message", "finish", "summary",
    "data:image/png;base64,AAAA", "{\"a\": 1}", "{broken", "2026-01-01T00:00:00Z",
]  # fmt: skip

_leaves = (
    st.none()
    | st.booleans()
    | st.integers(-5, 10**12)
    | st.floats(allow_nan=False)
    | st.text(max_size=4)
    | st.sampled_from(_WORDS)
)
_values: st.SearchStrategy[Any] = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=6)
    ),
    max_leaves=30,
)
_records = st.lists(st.dictionaries(st.sampled_from(_KEYS), _values, max_size=8), max_size=8)


@settings(max_examples=150, deadline=None)
@given(_records)
def test_no_record_shape_breaks_an_import(records: list[dict[str, Any]]) -> None:
    lines = "\n".join(json.dumps(r) for r in records)
    imports = [
        (lines, "claude-code"),
        (lines, "openai-chat"),
        (lines, "openhands"),
        (json.dumps({"history": records}), "openhands"),
        (json.dumps({"messages": records, "info": {}}), "mini-swe-agent"),
    ]
    for text, fmt in imports:
        for transcript in parse_transcripts(text, format=fmt):  # type: ignore[arg-type]
            stats = transcript.stats
            assert stats.messages == len(transcript.messages)
    with contextlib.suppress(ImportFailed):  # unrecognisable: refused with a message
        parse_transcripts(lines)


@settings(max_examples=150, deadline=None)
@given(_values)
def test_any_json_document_imports_or_is_refused_with_a_message(value: Any) -> None:
    try:
        transcripts = parse_transcripts(json.dumps(value))
    except ImportFailed as refused:
        assert "gosling can import" in str(refused)
    else:
        assert all(t.stats.messages == len(t.messages) for t in transcripts)
