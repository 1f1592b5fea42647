"""The structured summary's JSON schema matches the fields gosling reads and the prompt asks
for, and a field the model added is neither dropped nor hidden from the next model call."""

from __future__ import annotations

import dataclasses
import json
import re

from gosling import STRUCTURED_SUMMARY_SCHEMA, StructuredSummary, builtin_template


def test_the_schema_names_exactly_the_fields_of_the_summary_and_of_the_prompt() -> None:
    fields = {f.name for f in dataclasses.fields(StructuredSummary)} - {"extra"}
    assert set(STRUCTURED_SUMMARY_SCHEMA["properties"]) == fields
    prompt = builtin_template("compaction.md")
    start = prompt.index("```json\n{")
    example = prompt[start : prompt.index("```", start + 7)]
    assert set(re.findall(r'^  "(\w+)":', example, re.MULTILINE)) == fields
    assert STRUCTURED_SUMMARY_SCHEMA["additionalProperties"] is True


def test_an_unknown_key_is_kept_and_shown_to_the_next_model_call() -> None:
    reply = json.dumps(
        {"current_work": "wiring the API", "risks": ["the cache", "the lock"], "owner": "ana"}
    )
    summary = StructuredSummary.parse(reply)
    assert summary is not None
    assert summary.extra == {"risks": ["the cache", "the lock"], "owner": "ana"}
    text = summary.render()
    assert re.search(r"## Other Notes\n### risks\n- the cache\n- the lock\n### owner\nana", text)
