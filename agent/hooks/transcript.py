"""The `transcript_path` a hook gets: the session as JSON lines in Claude Code's shape.

gosling keeps sessions in SQLite; scripts written for Claude Code read a JSONL file
(`jq 'select(.type == "assistant") | .message.content[]'`). So while a session has hooks,
its messages are appended to `<state>/transcripts/<session id>.jsonl` (mode 0600, redacted)
just before a hook runs, each line `{type, uuid, sessionId, timestamp, cwd, message:
{role, content}}` with Anthropic-style content blocks. Only new messages are written.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gosling.conversation import (
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolRequest,
    ToolResponse,
)
from gosling.redact import redact_json

if TYPE_CHECKING:
    from gosling.agent.session import AgentSession


class TranscriptFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.written = 0

    def sync(self, session: AgentSession, working_dir: Path) -> str:
        """Append the messages not yet written; the path, or "" when it cannot be written."""
        new = session.messages[self.written :]
        if not new and self.written:
            return str(self.path)
        session_id = session.id or self.path.stem
        lines = [
            redact_json(json.dumps(_line(m, session_id, working_dir), ensure_ascii=False))
            for m in new
        ]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as handle:
                handle.write("".join(line + "\n" for line in lines))
        except OSError:
            return ""
        self.written += len(new)
        return str(self.path)


def _line(message: Message, session_id: str, working_dir: Path) -> dict[str, Any]:
    return {
        "type": message.role,
        "uuid": message.id,
        "sessionId": session_id,
        "timestamp": datetime.fromtimestamp(message.created, UTC).isoformat(),
        "cwd": str(working_dir),
        "isMeta": not message.metadata.user_visible,
        "message": {"role": message.role, "content": [_block(p) for p in message.content]},
    }


def _block(part: Any) -> dict[str, Any]:
    if isinstance(part, TextContent):
        return {"type": "text", "text": part.text}
    if isinstance(part, ToolRequest):
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments}
    if isinstance(part, ToolResponse):
        return {
            "type": "tool_result",
            "tool_use_id": part.id,
            "content": part.text(),
            "is_error": part.is_error,
        }
    if isinstance(part, ThinkingContent):
        return {"type": "thinking", "thinking": part.thinking}
    if isinstance(part, ImageContent):
        return {"type": "image", "source": {"type": "base64", "media_type": part.mime_type}}
    return {"type": getattr(part, "type", "unknown")}
