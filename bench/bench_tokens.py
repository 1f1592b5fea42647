"""Token counting: throughput, and a 1,000-message conversation cold vs warm cache."""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from gosling.context_mgmt.tokens import TokenCounter, o200k_encoding
from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "transcripts"


def _conversation(n: int) -> list[Message]:
    messages: list[Message] = []
    for i in range(n // 2):
        call = ToolRequest(
            id=f"c{i}", name="developer__shell", arguments={"command": f"grep -rn item_{i} src/"}
        )
        messages.append(Message.assistant(f"Looking for item {i} in the sources.", call))
        output = "\n".join(
            f"src/module_{j}.py:{j * 7}: item_{i} = compute({j}, {i})" for j in range(12)
        )
        messages.append(
            Message.user(None, ToolResponse(id=f"c{i}", content=(TextContent(text=output),)))
        )
    return messages


def run() -> dict[str, Any]:
    start = time.perf_counter()
    o200k_encoding()
    load_s = time.perf_counter() - start

    sample = "".join(p.read_text(errors="replace")[:200_000] for p in sorted(CORPUS.glob("*"))[:3])
    sample = sample or "The quick brown fox jumps over the lazy dog. " * 5000
    counter = TokenCounter()
    start = time.perf_counter()
    n_tokens = len(counter.encode(sample))
    encode_s = time.perf_counter() - start

    messages = _conversation(1000)
    counter = TokenCounter()
    start = time.perf_counter()
    counter.count_messages(messages)
    cold_ms = (time.perf_counter() - start) * 1000
    warm = []
    for i in range(20):
        messages.append(Message.user(f"follow-up question {i}"))
        start = time.perf_counter()
        counter.count_messages(messages)
        warm.append((time.perf_counter() - start) * 1000)
    return {
        "encoding_load_ms": round(load_s * 1000, 1),
        "throughput_tokens_per_s": round(n_tokens / encode_s),
        "conversation_1000_cold_ms": round(cold_ms, 2),
        "conversation_1000_recount_after_one_new_ms": round(statistics.median(warm), 3),
        "targets": {"conversation_1000_recount_after_one_new_ms": 1.0},
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
