"""An ACP prompt (content blocks) as the user message gosling sends the model.

Text stays text. A resource link (a file the user @-mentioned) becomes a mention of its
path, relative to the working dir when inside it, that the model can `view`. An embedded
resource (the editor sent the file's content, perhaps unsaved) is included in a
`<file path=...>` block; a binary one is named, not included. Images go to models that take
them and are named otherwise; audio is named.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
)

from gosling.conversation import ImageContent, Message, TextContent

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
IMAGE_PROVIDERS = frozenset({"anthropic", "openai", "openai-responses", "openrouter"})
"""Providers whose models take images in the user's message."""


def prompt_message(blocks: Sequence[PromptBlock], working_dir: Path, *, images: bool) -> Message:
    """The user message for `blocks`; raises ValueError when nothing is left to send."""
    parts: list[TextContent | ImageContent] = []
    for index, block in enumerate(blocks):
        if isinstance(block, TextContentBlock):
            text = block.text[1:] if index == 0 and block.text.startswith("//") else block.text
            if text:
                parts.append(TextContent(text=text))
        elif isinstance(block, ResourceContentBlock):
            parts.append(TextContent(text=f"@{shown_uri(block.uri, working_dir)}"))
        elif isinstance(block, EmbeddedResourceContentBlock):
            parts.append(TextContent(text=_embedded(block, working_dir)))
        elif isinstance(block, ImageContentBlock):
            if images:
                parts.append(ImageContent(data=block.data, mime_type=block.mime_type))
            else:
                parts.append(TextContent(text="[an image was attached; this model takes none]"))
        else:
            parts.append(TextContent(text=f"[an audio clip ({block.mime_type}) was attached]"))
    if not any(isinstance(p, ImageContent) or p.text.strip() for p in parts):
        raise ValueError("the prompt is empty; send at least one text block")
    return Message(role="user", content=tuple(_merged(parts)))


def command_text(blocks: Sequence[PromptBlock]) -> str | None:
    """The prompt's text when it is a slash command (`/compact keep the API`), else None."""
    texts = [b.text for b in blocks if isinstance(b, TextContentBlock)]
    if len(texts) != len(blocks) or not texts:
        return None
    text = "".join(texts).strip()
    return text if text.startswith("/") and not text.startswith("//") else None


def shown_uri(uri: str, working_dir: Path) -> str:
    """A `file://` URI as a path (relative inside the working dir); other URIs as given."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("file", ""):
        return uri
    path = Path(unquote(parsed.path))
    try:
        return path.resolve().relative_to(working_dir.resolve()).as_posix()
    except ValueError:
        return str(path)


def _embedded(block: EmbeddedResourceContentBlock, working_dir: Path) -> str:
    resource = block.resource
    where = shown_uri(resource.uri, working_dir)
    if isinstance(resource, BlobResourceContents):
        kind = resource.mime_type or "binary data"
        return f"[{where} ({kind}) was attached; binary content is not included]"
    return f'<file path="{where}">\n{resource.text}\n</file>'


def _merged(parts: list[TextContent | ImageContent]) -> list[TextContent | ImageContent]:
    """Adjacent text blocks joined, so the model sees one text per run."""
    merged: list[TextContent | ImageContent] = []
    for part in parts:
        last = merged[-1] if merged else None
        if isinstance(part, TextContent) and isinstance(last, TextContent):
            separator = "" if last.text.endswith((" ", "\n")) else "\n"
            merged[-1] = TextContent(text=last.text + separator + part.text)
        else:
            merged.append(part)
    return merged
