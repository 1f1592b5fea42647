"""The editor's MCP servers (`mcpServers` of session/new, load and resume) as gosling
extensions, added to the ones gosling's own config starts.

They are the user's own configuration, like `--mcp-config`, so they start as given (stdio
ones inside the session's sandbox, like every other server). gosling speaks stdio and
streamable HTTP; an SSE server is skipped with a note, and so is an MCP-over-ACP one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer

from gosling.agent.tools.extension_config import EXTENSION_NAME_PATTERN, ExtensionConfig

_NOT_A_NAME = re.compile(r"[^a-zA-Z0-9-]+")


def extension_configs(
    servers: Sequence[object], taken: Iterable[str]
) -> tuple[list[ExtensionConfig], list[str]]:
    """The servers gosling can start, and a note for each one it cannot."""
    names = set(taken)
    configs: list[ExtensionConfig] = []
    notes: list[str] = []
    for server in servers:
        label = getattr(server, "name", "?")
        if isinstance(server, SseMcpServer):
            notes.append(f"MCP server {label!r} speaks SSE, which gosling does not; skipped")
            continue
        if not isinstance(server, McpServerStdio | HttpMcpServer):
            notes.append(f"MCP server {label!r} is of a kind gosling cannot start; skipped")
            continue
        name = extension_name(server.name, names)
        names.add(name)
        if isinstance(server, McpServerStdio):
            configs.append(
                ExtensionConfig(
                    name=name,
                    command=server.command,
                    args=tuple(server.args),
                    env={v.name: v.value for v in server.env},
                )
            )
        else:
            configs.append(
                ExtensionConfig(
                    name=name,
                    type="streamable_http",
                    url=server.url,
                    headers={h.name: h.value for h in server.headers},
                )
            )
    return configs, notes


def extension_name(wanted: str, taken: set[str]) -> str:
    """A valid extension name for `wanted` (its tools are `<name>__<tool>`), unique."""
    base = "_".join(p for p in _NOT_A_NAME.sub("_", wanted).split("_") if p) or "editor"
    if not EXTENSION_NAME_PATTERN.match(base):
        base = "editor"
    name, number = base, 2
    while name in taken:
        name, number = f"{base}-{number}", number + 1
    return name
