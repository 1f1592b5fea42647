"""The `context` extension: `recall`, which brings back tool output hidden to save context.

Masked tool results and summarized tool calls name their call id and this tool
(`context__recall("call_abc")`, see `context_mgmt.recall.RECALL_TOOL_NAME`). The tool is a thin
adapter: it reads the session's messages through `ToolContext.session_messages` and lets
`context_mgmt.recall` find the original.
"""

from __future__ import annotations

from gosling.agent.tools.base import Tool, ToolContext, ToolError, ToolResult, tool
from gosling.agent.tools.manager import BuiltinExtension
from gosling.context_mgmt.recall import recall
from gosling.conversation import TextContent

CONTEXT_EXTENSION = "context"
RECALL_TOOL = "recall"
"""Exposed as `context__recall`, the name `context_mgmt.recall.RECALL_TOOL_NAME` gives."""

INSTRUCTIONS = """\
Old tool outputs may be replaced in your context by a short placeholder, a summary or a note
of folded calls that names the tool call id. When you need the exact original output again,
call recall with that id instead of re-running the tool; recall("folded") lists every call
whose output is out of view, with its id."""


def recall_tool() -> Tool:
    @tool(name=RECALL_TOOL, read_only=True)
    async def recall_output(ctx: ToolContext, id: str) -> ToolResult:
        """Show the full original output of an earlier tool call whose output was hidden or
        summarized to save context.

        Args:
            id: The tool call id shown in the placeholder, summary or note, e.g.
                "call_abc123"; or "folded" to list every call out of view with its id.
        """
        if ctx.session_messages is None:
            raise ToolError("recall needs a session: there is no earlier tool output to show.")
        found = recall(ctx.session_messages(), id)
        if not found.found:
            return ToolResult.error(found.text)
        return ToolResult((TextContent(text=found.text), *found.images))

    return recall_output


def context_extension() -> BuiltinExtension:
    """The built-in `context` extension; its tool is exposed as `context__recall`."""
    return BuiltinExtension(CONTEXT_EXTENSION, [recall_tool()], INSTRUCTIONS)
