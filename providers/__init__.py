"""Models behind APIs: the `Provider` interface, errors, adapters and a scripted test double.

Adapters import their SDKs lazily; importing this package never imports anthropic or openai.
"""

from gosling import quiet_library_loggers
from gosling.providers.base import (
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
from gosling.providers.errors import (
    AuthenticationFailed,
    ContextLengthExceeded,
    MissingApiKey,
    ProviderConfigError,
    ProviderError,
    RateLimited,
    RequestFailed,
    ServerError,
)
from gosling.providers.factory import PROVIDER_NAMES, PROVIDERS, ProviderInfo, create_provider
from gosling.providers.overflow import is_context_overflow
from gosling.providers.registry import ModelLimits, lookup_model
from gosling.providers.retry import RetryPolicy
from gosling.providers.testing import (
    ScriptedProvider,
    ScriptedReply,
    ScriptedRequest,
    ScriptedToolCall,
)

__all__ = [
    "DEFAULT_CONTEXT_LIMIT",
    "PROVIDERS",
    "PROVIDER_NAMES",
    "TRUNCATED_STOP_REASONS",
    "AuthenticationFailed",
    "Completed",
    "ContextLengthExceeded",
    "MissingApiKey",
    "ModelConfig",
    "ModelLimits",
    "Provider",
    "ProviderConfigError",
    "ProviderError",
    "ProviderInfo",
    "RateLimited",
    "RequestFailed",
    "RetryPolicy",
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
    "create_provider",
    "is_context_overflow",
    "lookup_model",
]

quiet_library_loggers()
