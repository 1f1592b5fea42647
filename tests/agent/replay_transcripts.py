"""Small synthetic agent runs for replay tests, as OpenAI-chat documents (what
`sessions.importers` reads), so the tests go through the same import path as real files."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SYSTEM = "You are a careful coding agent."
TASK = "Fix the date parsing bug in src/dates.py"
FOLLOW_UP = "Now update docs/usage.md to match."


def _output(n: int, chars: int) -> str:
    line = f"src/module_{n}.py: def handler_{n}(value): return parse(value, strict=True)\n"
    return (line * (chars // len(line) + 1))[:chars]


def chat_run(
    *,
    turns: tuple[int, ...] = (30,),
    output_chars: int = 1_200,
    empty_result_at: int = -1,
    sizes: Sequence[int] = (),
) -> list[dict[str, Any]]:
    """One user message per turn, each followed by that many tool calls (one per model call)
    with outputs of `output_chars` characters (call n: `sizes[n]` when given) and a closing
    answer. The call numbered `empty_result_at` gets an empty result (a source defect)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    n = 0
    for turn, calls in enumerate(turns):
        messages.append({"role": "user", "content": TASK if turn == 0 else FOLLOW_UP})
        for _ in range(calls):
            call_id = f"call_{n}"
            arguments = json.dumps({"command": f"cat src/module_{n}.py"})
            messages.append(
                {
                    "role": "assistant",
                    "content": f"Looking at module {n}.",
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "bash", "arguments": arguments},
                        }
                    ],
                }
            )
            chars = sizes[n] if n < len(sizes) else output_chars
            content = "" if n == empty_result_at else _output(n, chars)
            messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
            n += 1
        messages.append({"role": "assistant", "content": f"Turn {turn + 1} is done."})
    return messages


def write_run(path: Path, runs: int = 1, **kwargs: Any) -> Path:
    """Write `chat_run(**kwargs)` to `path`: one JSON document, or JSON Lines with one
    conversation per line when `runs` > 1."""
    if runs == 1:
        path.write_text(json.dumps(chat_run(**kwargs)), encoding="utf-8")
    else:
        lines = [json.dumps({"messages": chat_run(**kwargs)}) for _ in range(runs)]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
