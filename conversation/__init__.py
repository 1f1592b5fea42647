"""The message vocabulary every other package speaks."""

from gosling.conversation.content import (
    Content,
    ImageContent,
    RedactedThinkingContent,
    SystemNotification,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
    ToolResultPart,
    sanitize_text,
)
from gosling.conversation.conversation import Conversation
from gosling.conversation.fix import (
    extends_valid_view,
    fix_agent_view,
    fix_conversation,
    is_valid_agent_view,
)
from gosling.conversation.message import (
    TURN_CONTEXT_KIND,
    EffectiveRole,
    Message,
    MessageMetadata,
    Role,
    new_message_id,
)

__all__ = [
    "TURN_CONTEXT_KIND",
    "Content",
    "Conversation",
    "EffectiveRole",
    "ImageContent",
    "Message",
    "MessageMetadata",
    "RedactedThinkingContent",
    "Role",
    "SystemNotification",
    "TextContent",
    "ThinkingContent",
    "ToolRequest",
    "ToolResponse",
    "ToolResultPart",
    "extends_valid_view",
    "fix_agent_view",
    "fix_conversation",
    "is_valid_agent_view",
    "new_message_id",
    "sanitize_text",
]
