"""The fake server's script: scripted turns (what the model "says") and faults (how it fails).

Turns are wire-neutral: the same `Turn` is rendered as Anthropic Messages, OpenAI Chat
Completions or OpenAI Responses depending on the endpoint that receives the request. Each
request consumes exactly one turn, so a retried request needs a turn of its own.
The JSON form (for `--script FILE.json`) is documented in tests/fakes/README.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

Stop = Literal["end", "tool_use", "max_tokens"]
FaultKind = Literal[
    "status",
    "auth",
    "rate_limit",
    "overloaded",
    "server_error",
    "context_overflow",
    "drop",
    "malformed",
    "stream_error",
    "trickle",
]
FAULT_KINDS: tuple[str, ...] = FaultKind.__args__  # type: ignore[attr-defined]

Quirk = Literal[
    "whole_arguments",  # chat: all tool arguments in the first fragment
    "repeat_ids",  # chat: every tool-call fragment repeats id, type and name
    "no_usage",  # chat: no usage, even when stream_options.include_usage was asked for
    "index_zero",  # chat: every tool call streamed with index 0 (older Ollama)
    "no_ids",  # chat: tool calls without ids
    "finish_stop",  # chat: finish_reason "stop" although tools were called (Ollama)
    "reasoning_content",  # chat: thinking streamed as delta.reasoning_content (vLLM, DeepSeek)
]
QUIRKS: tuple[str, ...] = Quirk.__args__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class FakeToolCall:
    """A tool call the fake model makes. `chunks` splits the JSON arguments text as streamed."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    chunks: Sequence[str] | None = None

    def arguments_json(self) -> str:
        return json.dumps(dict(self.arguments))

    def argument_chunks(self) -> list[str]:
        if self.chunks is not None:
            return list(self.chunks)
        raw = self.arguments_json()
        size = max(1, len(raw) // 3)
        return [raw[i : i + size] for i in range(0, len(raw), size)] or [""]


@dataclass(frozen=True)
class FakeUsage:
    """Token counts as Anthropic reports them: `input_tokens` excludes the cached parts.
    The OpenAI renderings add the cache counts into `prompt_tokens` / `input_tokens`."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class Fault:
    """How a request fails. Build with the class methods; see README for each kind."""

    kind: FaultKind
    status: int | None = None
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    retry_after: str | None = None
    flavor: str | None = None
    after_events: int | None = None
    error_type: str | None = None
    message: str | None = None
    interval: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(
                f"unknown fault kind {self.kind!r}; use one of {', '.join(FAULT_KINDS)}"
            )

    @classmethod
    def http_status(
        cls, status: int, body: Any = None, headers: Mapping[str, str] | None = None
    ) -> Fault:
        return cls("status", status=status, body=body, headers=dict(headers or {}))

    @classmethod
    def auth(cls) -> Fault:
        return cls("auth")

    @classmethod
    def rate_limit(cls, retry_after: str | None = None) -> Fault:
        return cls("rate_limit", retry_after=retry_after)

    @classmethod
    def overloaded(cls, retry_after: str | None = None) -> Fault:
        return cls("overloaded", retry_after=retry_after)

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        return cls("server_error", status=status)

    @classmethod
    def context_overflow(cls, flavor: str | None = None) -> Fault:
        return cls("context_overflow", flavor=flavor)

    @classmethod
    def drop(cls, after_events: int | None = None) -> Fault:
        return cls("drop", after_events=after_events)

    @classmethod
    def malformed(cls, after_events: int | None = None) -> Fault:
        return cls("malformed", after_events=after_events)

    @classmethod
    def stream_error(
        cls,
        error_type: str = "overloaded_error",
        message: str | None = None,
        after_events: int | None = None,
    ) -> Fault:
        return cls(
            "stream_error", error_type=error_type, message=message, after_events=after_events
        )

    @classmethod
    def trickle(cls, interval: float = 0.05, after_events: int | None = 0) -> Fault:
        """A 200 whose body never ends: keep-alive pings every `interval` seconds."""
        return cls("trickle", interval=interval, after_events=after_events)

    @classmethod
    def from_json(cls, data: str | Mapping[str, Any]) -> Fault:
        if isinstance(data, str):
            return cls(cast(FaultKind, data))
        known = {
            "kind",
            "status",
            "body",
            "headers",
            "retry_after",
            "flavor",
            "after_events",
            "error_type",
            "message",
            "interval",
        }
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown fault field(s) {sorted(unknown)}; known: {sorted(known)}")
        return cls(**cast(dict[str, Any], dict(data)))


@dataclass(frozen=True)
class Turn:
    """One scripted model reply (or failure) for one request."""

    text: str = ""
    chunks: Sequence[str] | None = None
    thinking: str = ""
    signature: str = "fake-signature"
    redacted_thinking: Sequence[str] = ()
    tool_calls: Sequence[FakeToolCall] = ()
    usage: FakeUsage | None = None
    stop: Stop | None = None
    delay: float = 0.0
    """Seconds to wait before the first byte of the response."""
    quirks: frozenset[str] = frozenset()
    fault: Fault | None = None

    def __post_init__(self) -> None:
        unknown = set(self.quirks) - set(QUIRKS)
        if unknown:
            raise ValueError(f"unknown quirk(s) {sorted(unknown)}; known: {', '.join(QUIRKS)}")

    @classmethod
    def failing(cls, fault: Fault, **content: Any) -> Turn:
        return cls(fault=fault, **content)

    @property
    def stop_reason(self) -> Stop:
        if self.stop is not None:
            return self.stop
        return "tool_use" if self.tool_calls else "end"

    def text_chunks(self) -> list[str]:
        if self.chunks is not None:
            return list(self.chunks)
        words = self.text.split(" ")
        return [w + " " for w in words[:-1]] + [words[-1]] if self.text else []

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Turn:
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown turn field(s) {sorted(unknown)}; known: {sorted(known)}")
        values = dict(data)
        if "tool_calls" in values:
            values["tool_calls"] = tuple(FakeToolCall(**tc) for tc in values["tool_calls"])
        if values.get("usage") is not None:
            values["usage"] = FakeUsage(**values["usage"])
        if values.get("fault") is not None:
            values["fault"] = Fault.from_json(values["fault"])
        if "quirks" in values:
            values["quirks"] = frozenset(values["quirks"])
        for key in ("chunks", "redacted_thinking"):
            if values.get(key) is not None:
                values[key] = tuple(values[key])
        return cls(**values)


ScriptItem = Turn | Fault | str


def as_turn(item: ScriptItem) -> Turn:
    """A plain string is a text reply; a bare fault is a turn that only fails."""
    if isinstance(item, Turn):
        return item
    if isinstance(item, Fault):
        return Turn(fault=item)
    return Turn(text=item)


def load_script(source: str | Path | Mapping[str, Any] | Sequence[Any]) -> list[Turn]:
    """Turns from a script file, its parsed JSON (`{"turns": [...]}`) or a bare list."""
    data: Any = source
    if isinstance(source, str | Path):
        data = json.loads(Path(source).read_text(encoding="utf-8"))
    if isinstance(data, Mapping):
        data = data.get("turns", [])
    turns: list[Turn] = []
    for item in data:
        turns.append(Turn(text=item) if isinstance(item, str) else Turn.from_json(item))
    return turns
