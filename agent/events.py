"""The reply loop's event vocabulary, shared by every renderer and `--output-format stream-json`.

Each event is a frozen dataclass with a `type` tag; `to_json()` gives the stream-json line
payload. Readers must ignore unknown types and fields, so new events can be added freely.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal

from pydantic import BaseModel

from gosling.conversation import Message
from gosling.providers import Usage

STREAM_JSON_VERSION = 1

CompactionTrigger = Literal["threshold", "overflow", "manual"]
StopReason = Literal[
    "end_turn",
    "max_turns",
    "cancelled",
    "error",
    "permission_denied",
    "context_exceeded",
    "hook_blocked",
    "hook_stopped",
]


@dataclass(frozen=True)
class Event:
    type: ClassVar[str] = "event"

    def to_json(self) -> dict[str, Any]:
        """The stream-json line: version, type, then the fields (models as JSON data)."""
        payload: dict[str, Any] = {"v": STREAM_JSON_VERSION, "type": self.type}
        for spec in fields(self):
            value = getattr(self, spec.name)
            payload[spec.name] = (
                value.model_dump(mode="json") if isinstance(value, BaseModel) else value
            )
        return payload


@dataclass(frozen=True)
class TextDelta(Event):
    type: ClassVar[str] = "text_delta"
    text: str


@dataclass(frozen=True)
class ThinkingDelta(Event):
    type: ClassVar[str] = "thinking_delta"
    text: str


@dataclass(frozen=True)
class MessageAdded(Event):
    """A message was appended to the session (and persisted)."""

    type: ClassVar[str] = "message"
    message: Message

    def to_json(self) -> dict[str, Any]:
        """Tool responses keep their id and error flag but not their output, which the
        `tool_result` event with the same id already carried: no output is printed twice."""
        payload = super().to_json()
        for part in payload["message"]["content"]:
            if part.get("type") == "tool_response":
                part.pop("content", None)
                part["output_in"] = "tool_result"
        return payload


@dataclass(frozen=True)
class ToolCall(Event):
    type: ClassVar[str] = "tool_call"
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolResult(Event):
    type: ClassVar[str] = "tool_result"
    id: str
    name: str
    output: str
    is_error: bool


@dataclass(frozen=True)
class PermissionRequest(Event):
    """A tool call waits for the user's approval (interactive) or was refused (headless)."""

    type: ClassVar[str] = "permission_request"
    id: str
    name: str
    arguments: dict[str, Any]
    reason: str
    granted: bool | None = None


@dataclass(frozen=True)
class CompactionStarted(Event):
    type: ClassVar[str] = "compaction_started"
    trigger: CompactionTrigger
    tokens_before: int


@dataclass(frozen=True)
class CompactionFinished(Event):
    type: ClassVar[str] = "compaction_finished"
    trigger: CompactionTrigger
    tokens_before: int
    tokens_after: int
    structured: bool
    receipt: dict[str, Any] | None = None
    """What the compaction kept and dropped (`CompactionReceipt.to_json()`): files, commands
    and error lines of the hidden originals that the summary does not hold."""
    receipt_line: str = ""
    """The receipt in one line, as the terminal shows it."""
    form: str = "transcript"
    """How the summary call was made: `prefix` (on the session's cached request) or
    `transcript`."""
    summary_usage: dict[str, Any] | None = None
    """The summary calls' tokens: input, output, cache read and written, and `cache_share`
    (the part of the input the provider's cache served)."""
    restored: dict[str, Any] | None = None
    """What came back from disk after the summary (`agent.after_compaction`): the files
    re-read with their tokens, the directories whose hints were sent again, the total."""


@dataclass(frozen=True)
class HintsLoaded(Event):
    type: ClassVar[str] = "hints_loaded"
    directories: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ContextTrimmed(Event):
    """Old tool results were masked, folded into one note, or summarized to save context."""

    type: ClassVar[str] = "context_trimmed"
    strategy: Literal["mask", "fold", "summarize"]
    tool_ids: list[str] = field(default_factory=list)
    tokens_before: int | None = None
    tokens_after: int | None = None
    """The context's size before and after the step (local estimates)."""


@dataclass(frozen=True)
class HookDecided(Event):
    """A configured hook ran and what it decided (`decision`: none, allow, deny, ask, block,
    context, stop or error); `--json` lists these under `hook_decisions`."""

    type: ClassVar[str] = "hook"
    event: str
    command: str
    source: str
    decision: str
    reason: str = ""
    tool_name: str | None = None
    tool_use_id: str | None = None
    exit_code: int | None = None
    duration_ms: int = 0


@dataclass(frozen=True)
class UsageUpdate(Event):
    type: ClassVar[str] = "usage"
    usage: Usage
    context_tokens: int
    context_limit: int


@dataclass(frozen=True)
class Notice(Event):
    """Something the user should know that is not an error (a warning, a hint)."""

    type: ClassVar[str] = "notice"
    text: str


@dataclass(frozen=True)
class CompactionRefused(Notice):
    """A compaction's summary was not used (larger than the history it would replace); the
    history is kept as it was. `text` says why."""

    type: ClassVar[str] = "compaction_refused"
    trigger: CompactionTrigger = "manual"
    tokens_before: int = 0


@dataclass(frozen=True)
class HookFailed(Notice):
    """A hook failed or timed out (said once per hook and session); the session goes on."""


@dataclass(frozen=True)
class ErrorEvent(Event):
    type: ClassVar[str] = "error"
    message: str
    kind: str = "runtime"


@dataclass(frozen=True)
class TurnFinished(Event):
    type: ClassVar[str] = "turn_finished"
    stop_reason: StopReason
    turns: int
    final_text: str
    usage: Usage
    permission_denied: bool = False
    """A tool call was refused because nobody could approve it (headless runs)."""
    error: str | None = None
