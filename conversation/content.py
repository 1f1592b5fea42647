"""Content parts of a message: a discriminated union on the `type` field.

Parts are immutable. A message's meaning never changes after it is built; visibility lives in
the message metadata, so the same parts can be shared between an original and its copies.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

_TAG_CHARACTERS = re.compile("[\U000e0000-\U000e007f]")


def sanitize_text(text: str) -> str:
    """Remove Unicode Tag characters (U+E0000..U+E007F), which can smuggle invisible prompts."""
    if not text.isascii() and _TAG_CHARACTERS.search(text):
        return _TAG_CHARACTERS.sub("", text)
    return text


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextContent(_Part):
    """Plain text."""

    type: Literal["text"] = "text"
    text: str

    @field_validator("text")
    @classmethod
    def _sanitize(cls, value: str) -> str:
        return sanitize_text(value)


class ImageContent(_Part):
    """An image, base64-encoded."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str = "image/png"


ToolResultPart = Annotated[TextContent | ImageContent, Field(discriminator="type")]


class ToolRequest(_Part):
    """The model asks for a tool call. `error` is set when the call itself was malformed
    (for example arguments that were not valid JSON); such a request still needs a response."""

    type: Literal["tool_request"] = "tool_request"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None

    @field_validator("arguments", mode="before")
    @classmethod
    def _coerce_arguments(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, dict):
            return {"value": value}
        return value


class ToolResponse(_Part):
    """The result of a tool call, answered with the id of its request."""

    type: Literal["tool_response"] = "tool_response"
    id: str
    content: tuple[ToolResultPart, ...] = ()
    is_error: bool = False

    def text(self) -> str:
        """The text items of the result joined by newlines."""
        return "\n".join(p.text for p in self.content if isinstance(p, TextContent))


class ThinkingContent(_Part):
    """Model reasoning; `signature` lets providers verify it when it is sent back."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = ""


class RedactedThinkingContent(_Part):
    """Reasoning the provider returned encrypted; it must be sent back unchanged."""

    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str


class SystemNotification(_Part):
    """A note for the user from gosling itself (compaction started, hints loaded, ...)."""

    type: Literal["system_notification"] = "system_notification"
    notification_type: Literal["inline", "thinking"] = "inline"
    msg: str


Content = Annotated[
    TextContent
    | ImageContent
    | ToolRequest
    | ToolResponse
    | ThinkingContent
    | RedactedThinkingContent
    | SystemNotification,
    Field(discriminator="type"),
]
