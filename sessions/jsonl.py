"""gosling's own lossless session file: JSON Lines.

Line 1 is the session header (`"type": "session"`, with `format` and `version`), then one
`message` line per message (content and metadata, in order), then one `usage` line per model
call. Readers skip line types they do not know, so later versions can add some; a header with a
newer `version` is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from gosling.conversation import Message
from gosling.providers import Usage
from gosling.sessions.errors import ImportFailed
from gosling.sessions.json_limits import load_json
from gosling.sessions.records import SessionSnapshot, TokenTotals, UsageKind, UsageRecord

FORMAT = "gosling-session"
VERSION = 1


class _Line(BaseModel):
    model_config = ConfigDict(frozen=True)


class SessionLine(_Line):
    type: Literal["session"] = "session"
    format: Literal["gosling-session"] = "gosling-session"
    version: int = VERSION
    id: str | None = None
    name: str = ""
    name_set_by_user: bool = False
    working_dir: str
    provider: str | None = None
    model: str | None = None
    created_at: float | None = None
    updated_at: float | None = None
    tokens: TokenTotals | None = None
    extension_data: dict[str, Any] = Field(default_factory=dict)


class MessageLine(_Line):
    type: Literal["message"] = "message"
    message: Message


class UsageLine(_Line):
    type: Literal["usage"] = "usage"
    created: float
    model: str
    kind: UsageKind
    usage: Usage


_BODY: TypeAdapter[MessageLine | UsageLine] = TypeAdapter(
    Annotated[MessageLine | UsageLine, Field(discriminator="type")]
)
_KNOWN_TYPES = frozenset({"message", "usage"})


def dump_jsonl(snapshot: SessionSnapshot) -> str:
    header = SessionLine(
        id=snapshot.id,
        name=snapshot.name,
        name_set_by_user=snapshot.name_set_by_user,
        working_dir=str(snapshot.working_dir),
        provider=snapshot.provider,
        model=snapshot.model,
        created_at=snapshot.created_at,
        updated_at=snapshot.updated_at,
        tokens=snapshot.tokens,
        extension_data=dict(snapshot.extension_data),
    )
    lines = [header.model_dump_json()]
    lines.extend(MessageLine(message=m).model_dump_json() for m in snapshot.messages)
    lines.extend(
        UsageLine(created=r.created, model=r.model, kind=r.kind, usage=r.usage).model_dump_json()
        for r in snapshot.usage
    )
    return "\n".join(lines) + "\n"


def looks_like_jsonl(head: str) -> bool:
    """True when the first line is a gosling session header."""
    first = head.lstrip().split("\n", 1)[0]
    try:
        value = load_json(first)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("format") == FORMAT


def parse_jsonl(text: str, source: str) -> SessionSnapshot:
    lines = text.splitlines()
    if not lines:
        raise ImportFailed(f"{source} is empty")
    try:
        header = SessionLine.model_validate(load_json(lines[0]))
    except ValueError as exc:
        raise ImportFailed(f"{source}, line 1 is not a gosling session header: {exc}") from exc
    if header.version > VERSION:
        raise ImportFailed(
            f"{source} was written by a newer gosling (format version {header.version}, this "
            f"one reads up to {VERSION}); upgrade gosling to import it"
        )
    messages: list[Message] = []
    usage: list[UsageRecord] = []
    ids: set[str] = set()
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            value = load_json(line)
            kind = value.get("type") if isinstance(value, dict) else None
            if not isinstance(kind, str):
                raise ValueError("expected an object with a string `type`")
            if kind not in _KNOWN_TYPES:
                continue
            entry = _BODY.validate_python(value)
        except ValueError as exc:
            raise ImportFailed(f"{source}, line {number} is not a valid entry: {exc}") from exc
        if isinstance(entry, MessageLine):
            if entry.message.id in ids:
                raise ImportFailed(
                    f"{source}, line {number} repeats message id {entry.message.id!r}"
                )
            ids.add(entry.message.id)
            messages.append(entry.message)
        else:
            usage.append(
                UsageRecord(
                    usage=entry.usage, model=entry.model, kind=entry.kind, created=entry.created
                )
            )
    return SessionSnapshot(
        id=header.id,
        name=header.name,
        name_set_by_user=header.name_set_by_user,
        working_dir=Path(header.working_dir),
        provider=header.provider,
        model=header.model,
        created_at=header.created_at,
        updated_at=header.updated_at,
        tokens=header.tokens,
        extension_data=header.extension_data,
        messages=messages,
        usage=usage,
    )
