"""Old tool calls on a long session: cost of masking and of applying pair summaries on a
10,000-message conversation, and the tokens masking saves there (synthetic outputs)."""

from __future__ import annotations

import json
import time
from typing import Any

from gosling.context_mgmt.masking import MaskingPresenter, messages_to_mask
from gosling.context_mgmt.tokens import TokenCounter
from gosling.context_mgmt.tool_pairs import TOOL_SUMMARY_KIND, apply_tool_pair_summaries
from gosling.conversation import Message, MessageMetadata, TextContent, ToolRequest, ToolResponse

MESSAGES = 10_000


def _session(n: int) -> list[Message]:
    messages = [Message.user("Refactor the storage layer.")]
    for i in range((n - 1) // 2):
        call = ToolRequest(
            id=f"c{i}", name="developer__shell", arguments={"command": f"grep -rn item_{i} src/"}
        )
        output = "\n".join(
            f"src/module_{j}.py:{j * 7}: item_{i} = compute({j}, {i})" for j in range(20)
        )
        messages.append(Message.assistant(None, call))
        messages.append(
            Message.user(None, ToolResponse(id=f"c{i}", content=(TextContent(text=output),)))
        )
    return messages


def _ms(fn: Any, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return round(best * 1000, 3)


def run() -> dict[str, Any]:
    messages = _session(MESSAGES)
    choose_ms = _ms(lambda: messages_to_mask(messages))
    chosen = set(messages_to_mask(messages))
    masked = [m.with_metadata(m.metadata.with_masked()) if m.id in chosen else m for m in messages]
    presenter = MaskingPresenter()
    cold_ms = _ms(lambda: [MaskingPresenter()(m) for m in masked], repeat=1)
    shown = [presenter(m) for m in masked]
    warm_ms = _ms(lambda: [presenter(m) for m in masked])

    counter = TokenCounter()
    before = counter.count_messages(messages)
    after = counter.count_messages(shown)

    meta = MessageMetadata.agent_only().with_kind(TOOL_SUMMARY_KIND)
    notes = {
        f"c{i}": Message(role="user", content=(TextContent(text=f"ran grep {i}"),), metadata=meta)
        for i in range(10)
    }
    apply_ms = _ms(lambda: apply_tool_pair_summaries(messages, notes))
    return {
        "messages": len(messages),
        "messages_to_mask_ms": choose_ms,
        "present_masked_cold_ms": cold_ms,
        "present_masked_warm_ms": warm_ms,
        "masking_tokens_before": before,
        "masking_tokens_after": after,
        "masking_saved_percent": round(100 * (before - after) / before, 1),
        "apply_tool_pair_summaries_ms": apply_ms,
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
