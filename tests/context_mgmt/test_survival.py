"""What comes back after a compaction (the table in docs/context-pipeline.md), item by item,
for the rows gosling's compaction itself decides."""

from __future__ import annotations

from gosling.context_mgmt import compact_messages
from gosling.context_mgmt.recall import recall_tool_output
from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse
from gosling.providers import ScriptedProvider

from .builders import STRUCTURED_REPLY


def _session() -> list[Message]:
    edit = ToolRequest(
        id="e1",
        name="developer__edit",
        arguments={"path": "src/app.py", "old": "a = 1\n", "new": "a = 2\nb = 3\n"},
    )
    run = ToolRequest(id="s1", name="developer__shell", arguments={"command": "pytest -q"})
    return [
        Message.user("Make the tests pass"),
        Message(role="assistant", content=(edit,)),
        Message(role="user", content=(ToolResponse(id="e1", content=(TextContent(text="ok"),)),)),
        Message(role="assistant", content=(run,)),
        Message(
            role="user",
            content=(
                ToolResponse(
                    id="s1",
                    content=(TextContent(text="Exit code: 1\nKeyError: 'user_id'\n" + "x" * 900),),
                ),
            ),
        ),
        Message.assistant("Fixing the key next."),
        Message.user("Also keep the old API working"),
    ]


async def test_each_row_of_the_survival_table_holds() -> None:
    messages = _session()
    result = await compact_messages(ScriptedProvider([STRUCTURED_REPLY]), messages)
    summary, *rest = result.appended
    text = summary.text
    # The user's last words: copied verbatim after the continuation.
    assert rest[-1].text == "Also keep the old API working"
    # Files the session touched: named with what was done to them.
    assert "### src/app.py\n*Recorded: edited (+2/−1 lines)*" in text
    # Commands, exit codes and error lines: in the trail.
    assert "- `pytest -q` → exit 1" in text and "- KeyError: 'user_id'" in text
    # Nothing dropped that the receipt would have to list.
    assert result.receipt.dropped == 0
    # Every original: stored agent-invisible and recallable.
    assert all(not m.metadata.agent_visible for m in result.messages[: len(messages)])
    assert "KeyError: 'user_id'" in recall_tool_output(list(result.messages), "s1")
