"""Tools and extensions: the tool interface, the developer extension, MCP servers.

Importing this package does not import the `mcp` SDK; that happens when a server starts.
"""

from __future__ import annotations

from gosling.agent.tools.base import (
    NAME_SEPARATOR,
    TOOL_NAME_PATTERN,
    ExtensionData,
    FunctionTool,
    MemoryExtensionData,
    Tool,
    ToolAnnotations,
    ToolContext,
    ToolError,
    ToolResult,
    exposed_name,
    tool,
)
from gosling.agent.tools.developer import (
    DEVELOPER,
    DeveloperSettings,
    TodoItem,
    developer_extension,
    read_todo,
    render_todo_block,
)
from gosling.agent.tools.extension_config import (
    ExtensionConfig,
    ExtensionConfigError,
    parse_extension_spec,
)
from gosling.agent.tools.manager import (
    BuiltinExtension,
    Extension,
    ExtensionEvent,
    ExtensionManager,
    to_response,
)

__all__ = [
    "DEVELOPER",
    "NAME_SEPARATOR",
    "TOOL_NAME_PATTERN",
    "BuiltinExtension",
    "DeveloperSettings",
    "Extension",
    "ExtensionConfig",
    "ExtensionConfigError",
    "ExtensionData",
    "ExtensionEvent",
    "ExtensionManager",
    "FunctionTool",
    "MemoryExtensionData",
    "TodoItem",
    "Tool",
    "ToolAnnotations",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "developer_extension",
    "exposed_name",
    "parse_extension_spec",
    "read_todo",
    "render_todo_block",
    "to_response",
    "tool",
]
