"""Models behind APIs: the `Provider` interface, errors, adapters and a scripted test double.

Adapters import their SDKs lazily; importing this package never imports anthropic or openai.
"""

from providers.base import (
    DEFAULT_CONTEXT_LIMIT,
    TRUNCATED_STOP_REASONS,
    Completed,
    ModelConfig,
    Provider,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolArgumentsDelta,
    ToolRequestDone,
    ToolRequestStarted,
    ToolSpec,
    Usage,
    UsageReported,
)
from providers.errors import (
    AuthenticationFailed,
    ContextLengthExceeded,
    ProviderError,
    RateLimited,
    RequestFailed,
    ServerError,
)
from providers.testing import ScriptedProvider, ScriptedReply, ScriptedRequest, ScriptedToolCall

__all__ = [
    "DEFAULT_CONTEXT_LIMIT",
    "TRUNCATED_STOP_REASONS",
    "AuthenticationFailed",
    "Completed",
    "ContextLengthExceeded",
    "ModelConfig",
    "Provider",
    "ProviderError",
    "RateLimited",
    "RequestFailed",
    "ScriptedProvider",
    "ScriptedReply",
    "ScriptedRequest",
    "ScriptedToolCall",
    "ServerError",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolArgumentsDelta",
    "ToolRequestDone",
    "ToolRequestStarted",
    "ToolSpec",
    "Usage",
    "UsageReported",
]
