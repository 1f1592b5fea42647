"""Small builders for conversations and scripted summarizers used across these tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse
from gosling.providers import ContextLengthExceeded, ScriptedReply, ScriptedRequest

SUMMARY_JSON = {
    "user_intent": ["Fix the parser bug"],
    "files": [{"path": "src/parser.py", "summary": "Fixed the off-by-one"}],
    "current_work": "Writing the regression test",
    "next_step": "Run the test suite",
}
STRUCTURED_REPLY = (
    "<analysis>\nThe user wants the parser fixed.\n</analysis>\n\n```json\n"
    + json.dumps(SUMMARY_JSON, indent=2)
    + "\n```"
)


def calls(*ids: str, name: str = "read_file", **arguments: Any) -> Message:
    """An assistant message requesting one tool call per id."""
    return Message(
        role="assistant",
        content=tuple(ToolRequest(id=i, name=name, arguments=dict(arguments)) for i in ids),
    )


def results(*pairs: tuple[str, str]) -> Message:
    """A user message answering tool calls: (id, output text) pairs."""
    return Message(
        role="user",
        content=tuple(ToolResponse(id=i, content=(TextContent(text=text),)) for i, text in pairs),
    )


def pair(call_id: str, name: str, arguments: dict[str, str], output: str) -> list[Message]:
    """One answered tool call: the assistant's request and the user message with its output."""
    return [calls(call_id, name=name, **arguments), results((call_id, output))]


def tool_session(rounds: int, *, task: str = "Fix the parser bug") -> list[Message]:
    """A user task followed by `rounds` tool calls, the outputs named `output-<n>`."""
    messages = [Message.user(task)]
    for n in range(rounds):
        messages.append(calls(f"call-{n}", path=f"src/file{n}.py"))
        messages.append(results((f"call-{n}", f"output-{n}")))
    return messages


def overflow_above(max_responses: int, reply: str = STRUCTURED_REPLY) -> Callable[..., Any]:
    """A scripted model step that overflows while its system prompt holds more than
    `max_responses` tool responses, and otherwise returns `reply`."""

    def step(request: ScriptedRequest) -> Any:
        if request.system.count("tool_response:") > max_responses:
            raise ContextLengthExceeded("prompt is too long")
        return ScriptedReply(text=reply)

    return step


def always_overflow(request: ScriptedRequest) -> Any:
    raise ContextLengthExceeded("prompt is too long")


def outputs_in(system: str, rounds: int) -> list[int]:
    """Which `output-<n>` tool results a summarize prompt carried."""
    return [n for n in range(rounds) if f'"tool_response: output-{n}"' in system]
