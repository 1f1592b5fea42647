"""gosling: an agent runtime built around goose-grade context management, and a library.

Everything gosling installs lives under this one import root: `gosling.conversation`,
`gosling.prompts`, `gosling.hints`, `gosling.providers`, `gosling.sessions`,
`gosling.context_mgmt`, `gosling.agent`, `gosling.batch` and `gosling.redact`. In the
repository those packages are the folders at its top; `src/gosling/` links them under this
root so that the wheel, an editable install, pytest and mypy all see one module per file.

The names below are the public API (`docs/library.md`); each is loaded on first use, so
`import gosling` itself imports almost nothing. Library calls read no gosling configuration
directory, no `~/.agents` and no `GOSLING_*` variable, use only the built-in prompts and
write nothing, unless the caller passes a directory or its own text (git's own ignore
settings are honoured, as git does); coroutines have `_sync` twins that work inside a running
event loop.

- messages: `Message`, `TextContent`, `ImageContent`, `ToolRequest`, `ToolResponse`,
  `MessageMetadata`, `Conversation`
- tokens and views: `count_tokens`, `TokenCounter`, `model_view`, `needs_compaction`
- compaction: `compact` / `compact_sync`, `summarize` / `summarize_sync`,
  `summarize_tool_pair` / `summarize_tool_pair_sync`, `CompactionResult`, `Summary`,
  `CompactionFailed`, `CompactingProvider`, `StructuredSummary`,
  `STRUCTURED_SUMMARY_SCHEMA`, `FileActivity`
- templates: `CompactionTemplates`, `HintHeaders`, `builtin_template`
- hints: `load_hints`, `collect_hints`, `HintReport`, `SubdirectoryHintTracker`
- providers: `Provider`, `FunctionProvider`, `ModelConfig`, `ToolSpec`, `Usage`,
  `ProviderError`, `ContextLengthExceeded`, `ScriptedProvider`
- converters: `to_openai_chat` / `from_openai_chat`, `to_openai_responses` /
  `from_openai_responses`, `to_anthropic` / `from_anthropic`, `Converted`
- `run_sync`, `__version__`
"""

from __future__ import annotations

import importlib

from gosling.agent.version import __version__

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing would double this import


def quiet_library_loggers() -> None:
    """Put a `NullHandler` on the `gosling` logger (once), so gosling.* records never reach
    the last-resort stderr handler of an application that did not configure logging. The
    packages that log call it when imported (not `import gosling` itself: importing `logging`
    would be most of its cost); the command line configures the root logger itself."""
    import logging

    logger = logging.getLogger("gosling")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())


if TYPE_CHECKING:
    from typing import Any

    from gosling.api import (
        compact,
        compact_sync,
        count_tokens,
        load_hints,
        model_view,
        needs_compaction,
        summarize,
        summarize_sync,
        summarize_tool_pair,
        summarize_tool_pair_sync,
    )
    from gosling.context_mgmt.compact import CompactionResult
    from gosling.context_mgmt.compacting_provider import CompactingProvider
    from gosling.context_mgmt.errors import CompactionFailed
    from gosling.context_mgmt.structured import FileActivity, StructuredSummary
    from gosling.context_mgmt.summarize import Summary
    from gosling.context_mgmt.summary_schema import STRUCTURED_SUMMARY_SCHEMA
    from gosling.context_mgmt.templates import CompactionTemplates
    from gosling.context_mgmt.tokens import TokenCounter
    from gosling.conversation import (
        Conversation,
        ImageContent,
        Message,
        MessageMetadata,
        TextContent,
        ToolRequest,
        ToolResponse,
    )
    from gosling.hints import (
        HintHeaders,
        HintReport,
        SubdirectoryHintTracker,
        collect_hints,
    )
    from gosling.prompts import builtin_source as builtin_template
    from gosling.providers import (
        ContextLengthExceeded,
        ModelConfig,
        Provider,
        ProviderError,
        ScriptedProvider,
        ToolSpec,
        Usage,
    )
    from gosling.providers.function_provider import FunctionProvider
    from gosling.providers.message_dicts import (
        Converted,
        from_anthropic,
        from_openai_chat,
        from_openai_responses,
        to_anthropic,
        to_openai_chat,
        to_openai_responses,
    )
    from gosling.providers.run_sync import run_sync

_API = "gosling.api"
_DICTS = "gosling.providers.message_dicts"
_LAZY: dict[str, tuple[str, str]] = {
    **{
        name: (_API, name)
        for name in (
            "compact",
            "compact_sync",
            "count_tokens",
            "load_hints",
            "model_view",
            "needs_compaction",
            "summarize",
            "summarize_sync",
            "summarize_tool_pair",
            "summarize_tool_pair_sync",
        )
    },
    "CompactionResult": ("gosling.context_mgmt.compact", "CompactionResult"),
    "CompactingProvider": ("gosling.context_mgmt.compacting_provider", "CompactingProvider"),
    "CompactionFailed": ("gosling.context_mgmt.errors", "CompactionFailed"),
    "FileActivity": ("gosling.context_mgmt.structured", "FileActivity"),
    "StructuredSummary": ("gosling.context_mgmt.structured", "StructuredSummary"),
    "Summary": ("gosling.context_mgmt.summarize", "Summary"),
    "STRUCTURED_SUMMARY_SCHEMA": (
        "gosling.context_mgmt.summary_schema",
        "STRUCTURED_SUMMARY_SCHEMA",
    ),
    "CompactionTemplates": ("gosling.context_mgmt.templates", "CompactionTemplates"),
    "TokenCounter": ("gosling.context_mgmt.tokens", "TokenCounter"),
    **{
        name: ("gosling.conversation", name)
        for name in (
            "Conversation",
            "ImageContent",
            "Message",
            "MessageMetadata",
            "TextContent",
            "ToolRequest",
            "ToolResponse",
        )
    },
    **{
        name: ("gosling.hints", name)
        for name in ("HintHeaders", "HintReport", "SubdirectoryHintTracker", "collect_hints")
    },
    "builtin_template": ("gosling.prompts", "builtin_source"),
    **{
        name: ("gosling.providers", name)
        for name in (
            "ContextLengthExceeded",
            "ModelConfig",
            "Provider",
            "ProviderError",
            "ScriptedProvider",
            "ToolSpec",
            "Usage",
        )
    },
    "FunctionProvider": ("gosling.providers.function_provider", "FunctionProvider"),
    **{
        name: (_DICTS, name)
        for name in (
            "Converted",
            "from_anthropic",
            "from_openai_chat",
            "from_openai_responses",
            "to_anthropic",
            "to_openai_chat",
            "to_openai_responses",
        )
    },
    "run_sync": ("gosling.providers.run_sync", "run_sync"),
}

__all__ = [
    "STRUCTURED_SUMMARY_SCHEMA",
    "CompactingProvider",
    "CompactionFailed",
    "CompactionResult",
    "CompactionTemplates",
    "ContextLengthExceeded",
    "Conversation",
    "Converted",
    "FileActivity",
    "FunctionProvider",
    "HintHeaders",
    "HintReport",
    "ImageContent",
    "Message",
    "MessageMetadata",
    "ModelConfig",
    "Provider",
    "ProviderError",
    "ScriptedProvider",
    "StructuredSummary",
    "SubdirectoryHintTracker",
    "Summary",
    "TextContent",
    "TokenCounter",
    "ToolRequest",
    "ToolResponse",
    "ToolSpec",
    "Usage",
    "__version__",
    "builtin_template",
    "collect_hints",
    "compact",
    "compact_sync",
    "count_tokens",
    "from_anthropic",
    "from_openai_chat",
    "from_openai_responses",
    "load_hints",
    "model_view",
    "needs_compaction",
    "run_sync",
    "summarize",
    "summarize_sync",
    "summarize_tool_pair",
    "summarize_tool_pair_sync",
    "to_anthropic",
    "to_openai_chat",
    "to_openai_responses",
]


def __getattr__(name: str) -> Any:
    """Load a public name on first use (PEP 562), so `import gosling` stays cheap."""
    try:
        module, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'gosling' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    quiet_library_loggers()
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
