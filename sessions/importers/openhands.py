"""OpenHands (V0) event streams: evaluation `output.jsonl` files and plain event lists.

An evaluation file has one run per line (`{instance_id, instruction, metadata, history, ...}`);
each run becomes its own transcript. A file of events (a JSON list, or one event per line) is
one transcript. Events map the way OpenHands itself builds the model's messages:

- the `system` action is the system prompt;
- actions with `tool_call_metadata` are tool requests. The actions of one model response
  (same `model_response.id`) form one assistant message; its text is the response's content
  (or the action's `thought`), and the arguments come from the response's tool call when it is
  there, else from the action's `args`;
- observations answering such an action (by `tool_call_metadata.tool_call_id`, else by `cause`)
  are tool responses; `error` observations and failed commands are errors. A command's
  prefix and suffix (the "[The command completed with exit code 0.]" line) are kept: the
  model saw them;
- `message` actions are user or assistant text; the `recall` observation (workspace context
  and microagent knowledge) is an agent-only user message; an `error` observation that answers
  no tool call (a call the agent rejected) is a user message, as OpenHands sends it;
- anything else (`recall` actions, state changes, ...) is counted and skipped.
"""

from __future__ import annotations

from typing import Any

from gosling.conversation import Content, MessageMetadata, TextContent, ToolRequest, ToolResponse
from gosling.sessions.importers._json import (
    as_dict,
    as_list,
    as_str,
    decode_arguments,
    epoch_seconds,
    iter_json_lines,
    literal_or_json,
)
from gosling.sessions.importers.builder import TranscriptBuilder, text_parts
from gosling.sessions.importers.transcript import ImportedTranscript

_RECALL = MessageMetadata.agent_only().with_kind("recall")
_RECALL_SECTIONS = (
    ("repo_instructions", "Repository instructions"),
    ("additional_agent_instructions", "Additional instructions"),
)
_NEUTRAL_OBSERVATIONS = frozenset({"agent_state_changed", "null", "user_rejected"})


def is_event(value: Any) -> bool:
    event = as_dict(value)
    return ("action" in event or "observation" in event) and "source" in event


def is_run(value: Any) -> bool:
    run = as_dict(value)
    history = run.get("history")
    return isinstance(history, list) and (not history or is_event(history[0]))


def parse_openhands_document(document: Any, source: str) -> list[ImportedTranscript]:
    if is_run(document):
        return [_convert_run(as_dict(document), source)]
    events = [document] if isinstance(document, dict) else as_list(document)
    return [_convert_run({"history": events}, source)]


def parse_openhands_lines(text: str, source: str) -> list[ImportedTranscript]:
    """One transcript per run line; a file of bare events is one transcript."""
    first = TranscriptBuilder()  # lines that are no run are counted on the first transcript
    values = list(iter_json_lines(text, first))
    runs = [as_dict(v) for v in values if is_run(v)]
    if not runs:
        return [_convert_run({"history": values}, source, first)]
    first.skip("line is not an OpenHands run", len(values) - len(runs))
    return [_convert_run(run, source, first if n == 0 else None) for n, run in enumerate(runs)]


def _convert_run(
    run: dict[str, Any], source: str, builder: TranscriptBuilder | None = None
) -> ImportedTranscript:
    converter = _RunConverter(builder or TranscriptBuilder())
    for event in as_list(run.get("history")):
        converter.add(event)
    metadata = as_dict(run.get("metadata"))
    facts = {
        "instance_id": as_str(run.get("instance_id")),
        "agent_class": as_str(metadata.get("agent_class")),
        "model": as_str(as_dict(metadata.get("llm_config")).get("model")),
        "error": as_str(run.get("error")),
    }
    return converter.builder.build(
        "openhands",
        source=source,
        system_prompt=converter.system_prompt,
        title=as_str(run.get("instance_id")),
        info={k: v for k, v in facts.items() if v},
    )


class _RunConverter:
    def __init__(self, builder: TranscriptBuilder) -> None:
        self.builder = builder
        self.system_prompt: str | None = None
        self._call_of_action: dict[int | str, str] = {}
        self._responses_seen: set[str] = set()

    def add(self, value: Any) -> None:
        b = self.builder
        event = as_dict(value)
        if "action" in event:
            b.record(f"action:{as_str(event.get('action'))}")
            b.at(epoch_seconds(event.get("timestamp")))
            self._action(event)
        elif "observation" in event:
            b.record(f"observation:{as_str(event.get('observation'))}")
            b.at(epoch_seconds(event.get("timestamp")))
            self._observation(event)
        else:
            b.record("unknown")
            b.skip("event without action or observation")

    # -- actions ------------------------------------------------------------------------------

    def _action(self, event: dict[str, Any]) -> None:
        b = self.builder
        action = as_str(event.get("action")) or ""
        args = as_dict(event.get("args"))
        metadata = as_dict(event.get("tool_call_metadata"))
        if action == "system":
            if self.system_prompt is None:
                self.system_prompt = as_str(args.get("content")) or ""
            else:
                b.skip("repeated system action")
        elif as_str(metadata.get("tool_call_id")):
            self._tool_call(event, args, metadata)
        elif action == "message":
            text = as_str(args.get("content")) or as_str(event.get("message")) or ""
            parts = text_parts(text)
            images = as_list(args.get("image_urls"))
            parts.extend(TextContent(text=f"[image: {url}]") for url in images)
            if event.get("source") == "agent":
                b.assistant(parts)
            else:
                b.user(parts)
            if not parts:
                b.skip("empty message action")
        elif action == "finish":
            final = as_str(args.get("final_thought")) or as_str(args.get("thought"))
            b.assistant(text_parts(final or as_str(event.get("message"))))
        elif action == "recall":
            b.skip("recall action (its observation carries the context)")
        else:
            b.skip(f"{action} action without a tool call")

    def _tool_call(
        self, event: dict[str, Any], args: dict[str, Any], metadata: dict[str, Any]
    ) -> None:
        call_id = str(metadata["tool_call_id"])
        response = metadata.get("model_response")
        if isinstance(response, str):
            response = literal_or_json(response)
        response = as_dict(response)
        choices = as_list(response.get("choices"))
        message = as_dict(as_dict(choices[0]).get("message")) if choices else {}
        group = as_str(response.get("id")) or f"event-{event.get('id')}"
        parts: list[Content] = []
        if group not in self._responses_seen:
            self._responses_seen.add(group)
            # The response says what the model wrote; `thought` is OpenHands' copy of it (plus,
            # for `think`, the tool's argument), so it only stands in when the response is gone.
            said = as_str(message.get("content")) if message else as_str(args.get("thought"))
            parts.extend(text_parts(said))
        arguments, error = _arguments(call_id, message, args)
        name = as_str(metadata.get("function_name")) or as_str(event.get("action")) or ""
        parts.append(ToolRequest(id=call_id, name=name, arguments=arguments, error=error))
        if (key := _event_id(event.get("id"))) is not None:
            self._call_of_action[key] = call_id
        self.builder.assistant(parts, group=group)

    # -- observations -------------------------------------------------------------------------

    def _observation(self, event: dict[str, Any]) -> None:
        b = self.builder
        kind = as_str(event.get("observation")) or ""
        metadata = as_dict(event.get("tool_call_metadata"))
        cause = _event_id(event.get("cause"))
        call_id = as_str(metadata.get("tool_call_id")) or (
            self._call_of_action.get(cause) if cause is not None else None
        )
        content = _observed_text(event)
        if call_id:
            failed = kind == "error" or event.get("success") is False
            b.tool_results(
                [ToolResponse(id=call_id, content=(TextContent(text=content),), is_error=failed)]
            )
        elif kind == "recall":
            b.user(text_parts(_render_recall(event) or content), _RECALL)
        elif kind == "error":
            b.user(text_parts(content))
        elif kind in _NEUTRAL_OBSERVATIONS:
            b.skip(f"{kind} observation")
        else:
            b.skip(f"{kind} observation answering no tool call")


def _event_id(value: Any) -> int | str | None:
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None


def _arguments(
    call_id: str, message: dict[str, Any], args: dict[str, Any]
) -> tuple[dict[str, Any], str | None]:
    for call in as_list(message.get("tool_calls")):
        call = as_dict(call)
        if call.get("id") == call_id:
            return decode_arguments(as_dict(call.get("function")).get("arguments"))
    return {k: v for k, v in args.items() if k != "thought"}, None


def _observed_text(event: dict[str, Any]) -> str:
    content = as_str(event.get("content")) or ""
    extras = as_dict(as_dict(event.get("extras")).get("metadata"))
    prefix = as_str(extras.get("prefix")) or ""
    suffix = as_str(extras.get("suffix")) or ""
    return f"{prefix}{content}{suffix}"


def _render_recall(event: dict[str, Any]) -> str:
    """The workspace context a recall observation gave the model, as plain sections."""
    extras = as_dict(event.get("extras"))
    sections: list[str] = []
    repo = [as_str(extras.get("repo_name")), as_str(extras.get("repo_directory"))]
    if any(repo):
        sections.append("Repository: " + " ".join(r for r in repo if r))
    for key, label in _RECALL_SECTIONS:
        if text := as_str(extras.get(key)):
            sections.append(f"{label}:\n{text}")
    hosts = as_dict(extras.get("runtime_hosts"))
    if hosts:
        sections.append("Runtime hosts: " + ", ".join(hosts))
    if date := as_str(extras.get("date")):
        sections.append(f"Today's date: {date}")
    for item in as_list(extras.get("microagent_knowledge")):
        item = as_dict(item)
        if text := as_str(item.get("content")):
            trigger = as_str(item.get("trigger")) or as_str(item.get("name")) or "context"
            sections.append(f"Knowledge triggered by {trigger!r}:\n{text}")
    return "\n\n".join(sections)
