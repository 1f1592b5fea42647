"""mini-swe-agent trajectories (`*.traj.json`): `{info, messages, trajectory_format}`.

`messages` is OpenAI chat format (see `openai_chat`), with two additions:
- every message has an `extra` dict (raw provider response, cost, raw tool output); it repeats
  what the message says and is ignored.
- a final `role: "exit"` message holds the run's outcome (the submitted patch, or the reason
  it stopped). The model never saw it, so it becomes a user-role message visible to the user
  only, with kind "exit" and the exit status on its first line. The submit command that ended
  the run therefore stays unanswered, as it was.
Format-error messages ("Tool call error: ...") are ordinary user messages: the agent sent them
to the model in place of a tool result for a call it could not parse.
"""

from __future__ import annotations

from typing import Any

from gosling.conversation import MessageMetadata, TextContent
from gosling.sessions.importers._json import as_dict, as_list, as_str
from gosling.sessions.importers.builder import TranscriptBuilder
from gosling.sessions.importers.openai_chat import convert_chat_messages
from gosling.sessions.importers.transcript import ImportedTranscript

EXIT_KIND = "exit"


def looks_like_trajectory(document: Any) -> bool:
    doc = as_dict(document)
    if not isinstance(doc.get("messages"), list):
        return False
    fmt = as_str(doc.get("trajectory_format")) or ""
    return fmt.startswith("mini-swe-agent") or "mini_version" in as_dict(doc.get("info"))


def parse_mini_swe_agent(document: Any, source: str) -> list[ImportedTranscript]:
    doc = as_dict(document)
    info = as_dict(doc.get("info"))
    items = as_list(doc.get("messages"))
    builder = TranscriptBuilder()
    exit_status = as_str(info.get("exit_status"))

    def exit_note(message: dict[str, Any]) -> None:
        _exit_note(builder, exit_status, as_str(message.get("content")) or "")

    system = convert_chat_messages(items, builder, extra_roles={"exit": exit_note})
    facts = {
        "instance_id": as_str(doc.get("instance_id")),
        "exit_status": exit_status,
        "mini_version": as_str(info.get("mini_version")),
        "model": as_str(as_dict(as_dict(info.get("config")).get("model")).get("model_name")),
        "trajectory_format": as_str(doc.get("trajectory_format")),
    }
    return [
        builder.build(
            "mini-swe-agent",
            source=source,
            system_prompt=system,
            title=as_str(doc.get("instance_id")),
            info={k: v for k, v in facts.items() if v},
        )
    ]


def _exit_note(builder: TranscriptBuilder, status: str | None, content: str) -> None:
    heading = f"Exit status: {status or 'unknown'}"
    text = f"{heading}\n\n{content}" if content else heading
    metadata = MessageMetadata.user_only().with_kind(EXIT_KIND)
    builder.user([TextContent(text=text)], metadata)
