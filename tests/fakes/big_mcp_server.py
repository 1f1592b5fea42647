"""A tiny stdio MCP server whose one tool returns a huge text: `python big_mcp_server.py`.

`dump(megabytes)` returns that many MB of CSV-like lines between a `FIRST LINE` and a
`LAST LINE`, to check that no tool result can flood the session, the request or memory.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("big")
ROW = "id,region,amount,comment," + "x" * 40 + "\n"


@server.tool()
def dump(megabytes: float = 20.0) -> str:
    """Return `megabytes` MB of text."""
    rows = int(megabytes * 1_000_000) // len(ROW)
    return "FIRST LINE\n" + ROW * rows + "LAST LINE\n"


if __name__ == "__main__":
    server.run("stdio")
