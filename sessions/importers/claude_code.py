"""Claude Code session logs (`~/.claude/projects/<dir>/<session>.jsonl`).

One JSON record per line. `user` and `assistant` records carry an Anthropic Messages API
`message`; every other type (`progress`, `file-history-snapshot`, `queue-operation`, `system`,
`summary`, ...) is bookkeeping of the CLI and becomes no message. Quirks handled:

- Claude Code writes each content block of one API response as its own record; the records
  share `message.id` and are joined into one assistant message (tool results of the first
  blocks may come in between).
- Tool results arrive as `tool_result` blocks in `user` records, one record per result.
- `isMeta` user records (expanded slash commands, hook feedback, caveats) were sent to the
  model but not shown to the user: they become agent-only messages.
- `isSidechain` records belong to sub-agent conversations the main model never saw: skipped.
- `summary` records title the session; the last one wins.
- The file is imported in file order, so a session that was resumed with its history copied
  keeps both copies, as the log does.
"""

from __future__ import annotations

from typing import Any

from gosling.conversation import (
    Content,
    ImageContent,
    MessageMetadata,
    RedactedThinkingContent,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
)
from gosling.sessions.importers._json import (
    as_dict,
    as_list,
    as_str,
    epoch_seconds,
    iter_json_lines,
)
from gosling.sessions.importers.builder import TranscriptBuilder
from gosling.sessions.importers.transcript import ImportedTranscript

RECORD_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "summary",
        "progress",
        "file-history-snapshot",
        "queue-operation",
    }
)
_INFO_FIELDS = (
    ("sessionId", "session_id"),
    ("cwd", "cwd"),
    ("gitBranch", "branch"),
    ("version", "version"),
)
_AGENT_ONLY = MessageMetadata.agent_only()
_USER_ONLY = MessageMetadata.user_only()


def looks_like_record(value: Any) -> bool:
    """True for a record only Claude Code writes."""
    record = as_dict(value)
    kind = as_str(record.get("type"))
    if kind in ("summary", "file-history-snapshot", "queue-operation"):
        return True
    return kind in RECORD_TYPES and ("sessionId" in record or "parentUuid" in record)


def parse_claude_code(text: str, source: str) -> list[ImportedTranscript]:
    converter = _Converter()
    for value in iter_json_lines(text, converter.builder):
        converter.add(value)
    return [converter.finish(source)]


class _Converter:
    def __init__(self) -> None:
        self.builder = TranscriptBuilder()
        self.title: str | None = None
        self.info: dict[str, str] = {}

    def add(self, value: Any) -> None:
        b = self.builder
        if not isinstance(value, dict):
            b.record("not an object")
            b.skip("record is not a JSON object")
            return
        kind = as_str(value.get("type")) or "untyped"
        b.record(kind)
        if kind == "summary":
            self.title = as_str(value.get("summary")) or self.title
            b.skip("summary record (used as title)")
            return
        if kind not in ("user", "assistant"):
            b.skip(f"{kind} record")
            return
        if value.get("isSidechain") is True:
            b.skip("sidechain record")
            return
        message = value.get("message")
        if not isinstance(message, dict):
            b.skip(f"{kind} record without a message")
            return
        b.at(epoch_seconds(value.get("timestamp")))
        self._remember(value, message)
        if kind == "user":
            self._user(value, message)
        else:
            self._assistant(value, message)

    def _remember(self, record: dict[str, Any], message: dict[str, Any]) -> None:
        for key, name in _INFO_FIELDS:
            if name not in self.info and as_str(record.get(key)):
                self.info[name] = record[key]
        model = as_str(message.get("model"))
        if model and not model.startswith("<") and "model" not in self.info:
            self.info["model"] = model

    def _user(self, record: dict[str, Any], message: dict[str, Any]) -> None:
        b = self.builder
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        responses: list[ToolResponse] = []
        others: list[Content] = []
        for block in as_list(blocks):
            block = as_dict(block)
            kind = as_str(block.get("type"))
            if kind == "tool_result":
                responses.append(_tool_response(block, b))
            elif kind == "text":
                text = as_str(block.get("text"))
                if text:
                    others.append(TextContent(text=text))
            elif kind == "image":
                image = _image(block)
                if image is None:
                    b.skip("image block without base64 data")
                else:
                    others.append(image)
            else:
                b.skip(f"user block {kind!r}")
        if record.get("isMeta") is True:
            metadata = _AGENT_ONLY
        elif record.get("isCompactSummary") is True:
            metadata = MessageMetadata().with_kind("summary")
        else:
            metadata = MessageMetadata()
        b.tool_results(responses)
        b.user(others, metadata)
        if not responses and not others:
            b.skip("user record with no content")

    def _assistant(self, record: dict[str, Any], message: dict[str, Any]) -> None:
        b = self.builder
        parts: list[Content] = []
        for block in as_list(message.get("content")):
            block = as_dict(block)
            kind = as_str(block.get("type"))
            if kind == "text":
                text = as_str(block.get("text"))
                if text:
                    parts.append(TextContent(text=text))
            elif kind == "thinking":
                parts.append(
                    ThinkingContent(
                        thinking=as_str(block.get("thinking")) or "",
                        signature=as_str(block.get("signature")) or "",
                    )
                )
            elif kind == "redacted_thinking":
                parts.append(RedactedThinkingContent(data=as_str(block.get("data")) or ""))
            elif kind == "tool_use":
                parts.append(
                    ToolRequest(
                        id=str(block.get("id", "")),
                        name=str(block.get("name", "")),
                        arguments=block.get("input"),
                    )
                )
            else:
                b.skip(f"assistant block {kind!r}")
        if not parts:
            b.skip("assistant record with no content")
            return
        metadata = _USER_ONLY if record.get("isApiErrorMessage") is True else MessageMetadata()
        b.assistant(parts, group=as_str(message.get("id")), metadata=metadata)

    def finish(self, source: str) -> ImportedTranscript:
        return self.builder.build("claude-code", source=source, title=self.title, info=self.info)


def _tool_response(block: dict[str, Any], builder: TranscriptBuilder) -> ToolResponse:
    content = block.get("content")
    parts: list[TextContent | ImageContent] = []
    if isinstance(content, str):
        parts.append(TextContent(text=content))
    for item in as_list(content):
        item = as_dict(item)
        kind = as_str(item.get("type"))
        if kind == "text":
            parts.append(TextContent(text=as_str(item.get("text")) or ""))
        elif kind == "image" and (image := _image(item)) is not None:
            parts.append(image)
        else:
            builder.skip(f"tool result part {kind!r}")
    return ToolResponse(
        id=str(block.get("tool_use_id", "")),
        content=tuple(parts),
        is_error=block.get("is_error") is True,
    )


def _image(block: dict[str, Any]) -> ImageContent | None:
    source = as_dict(block.get("source"))
    data = as_str(source.get("data"))
    if source.get("type") != "base64" or not data:
        return None
    return ImageContent(data=data, mime_type=as_str(source.get("media_type")) or "image/png")
