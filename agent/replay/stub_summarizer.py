"""`StubSummarizer`: a deterministic stand-in for the summarizing model, for replays.

Replaying a session offline (`agent.replay.run`) must not need a model, and its numbers
must not change from run to run. This provider answers the two requests the pipeline sends
to the fast model, built from what the request itself carries:

- a compaction request (`summarize`): a structured summary document whose fields come from
  the transcript in the system prompt: the first user text as the intent, the tools used,
  the files from the read/modified lists and from paths in tool requests, the first line of
  each tool error, the user's messages and the agent's last words. The JSON is cut to at most
  `summary_tokens` tokens, so every compaction costs the same bounded size, as a real summary
  roughly does;
- a tool-pair request (`summarize_tool_pair`): a one-paragraph note naming the call, its
  arguments and the first line of its result (or its error), at most `note_tokens` tokens.

Like a real model it has a window: a request larger than `context_limit` raises
`ContextLengthExceeded`, so the compaction ladder runs when a history is too big to send.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from gosling.context_mgmt.pair_summarizer import TOOL_PAIR_REQUEST
from gosling.context_mgmt.summarize import SUMMARY_REQUEST
from gosling.conversation import Message
from gosling.providers import (
    Completed,
    ContextLengthExceeded,
    ModelConfig,
    Provider,
    StreamEvent,
    TextDelta,
    ToolSpec,
    Usage,
)

if TYPE_CHECKING:
    from gosling.context_mgmt.tokens import TokenCounter

STUB_SUMMARY_TOKENS = 2_000
"""Upper bound of a stub compaction summary (the JSON document), in tokens."""
STUB_NOTE_TOKENS = 80
"""Upper bound of a stub tool-pair note, in tokens."""

_LIST_LIMIT = 20
_ENTRY_CHARS = 300
_BLOCK = re.compile(r"^\[(user|assistant)\]: ", re.MULTILINE)
_ROLE = r"^(?:\[(?:user|assistant)\]: )?"
_TOOL_REQUEST = re.compile(_ROLE + r"tool_request\(([^)]*)\): (.*)$", re.MULTILINE)
_ERROR = re.compile(_ROLE + r"tool_response: \[error\] (.*)$", re.MULTILINE)
_PATH = re.compile(r"(?<![\w/.-])((?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8})\b")


class StubSummarizer(Provider):
    """Answers compaction and tool-pair requests deterministically, without a model."""

    name = "stub-summarizer"

    def __init__(
        self,
        *,
        context_limit: int = 128_000,
        summary_tokens: int = STUB_SUMMARY_TOKENS,
        note_tokens: int = STUB_NOTE_TOKENS,
        counter: TokenCounter | None = None,
    ) -> None:
        super().__init__(ModelConfig("stub-summarizer", context_limit=context_limit))
        self.summary_tokens = summary_tokens
        self.note_tokens = note_tokens
        self._counter = counter
        self.calls = 0

    def _tokens(self) -> TokenCounter:
        if self._counter is None:
            from gosling.context_mgmt.tokens import default_counter

            self._counter = default_counter()
        return self._counter

    async def stream(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        *,
        fast: bool = False,
    ) -> AsyncIterator[StreamEvent]:
        counter = self._tokens()
        sent = counter.count_chat(system, messages, tools)
        if sent > self.model_config.context_limit:
            raise ContextLengthExceeded(
                f"stub summarizer: {sent} tokens exceed its {self.model_config.context_limit}"
            )
        self.calls += 1
        text = self.reply_text(system, messages)
        yield TextDelta(text)
        usage = Usage(input_tokens=sent, output_tokens=counter.count_text(text))
        yield Completed(Message.assistant(text), usage.model_copy(update={"stop_reason": "stop"}))

    def reply_text(self, system: str, messages: Sequence[Message]) -> str:
        """What the stub answers to this request (pure)."""
        ask = messages[-1].text if messages else ""
        if ask.startswith(SUMMARY_REQUEST):
            return self.compaction_reply(system)
        if ask.startswith(TOOL_PAIR_REQUEST):
            return self.pair_note(system)
        return "[stub summarizer] no summary: the request is neither a compaction nor a tool pair."

    # -- compaction -------------------------------------------------------------------------

    def compaction_reply(self, system: str) -> str:
        document = self.summary_document(system)
        return "<analysis>stub summary</analysis>\n\n```json\n" + json.dumps(document) + "\n```"

    def summary_document(self, system: str) -> dict[str, Any]:
        """The structured summary of the transcript in a compaction prompt, capped in size."""
        transcript = _plain(_between(system, "<conversation>\n", "\n</conversation>") or system)
        users: list[str] = []
        last_assistant = ""
        for role, body in _blocks(transcript):
            if role == "user" and not body.startswith("tool_response:"):
                users.append(_clip(body))
            elif role == "assistant":
                words = "\n".join(
                    line for line in body.splitlines() if not line.startswith("tool_request(")
                ).strip()
                if words:
                    last_assistant = words
        tools: dict[str, int] = {}
        paths: dict[str, str] = {}
        for path in _lines(_between(system, "<modified-files>\n", "\n</modified-files>")):
            paths.setdefault(path, "created or changed by the agent")
        for path in _lines(_between(system, "<read-files>\n", "\n</read-files>")):
            paths.setdefault(path, "read by the agent")
        for name, arguments in _TOOL_REQUEST.findall(transcript):
            tools[name] = tools.get(name, 0) + 1
            for path in _PATH.findall(arguments):
                paths.setdefault(path, "named in a tool call")
        errors = list(dict.fromkeys(_clip(e) for e in _ERROR.findall(transcript)))
        document: dict[str, Any] = {
            "user_intent": users[:1],
            "technical_concepts": [f"{name} ({n} calls)" for name, n in tools.items()],
            "files": [{"path": p, "summary": s} for p, s in paths.items()],
            "errors_and_fixes": errors,
            "user_messages": users,
            "current_work": _clip(last_assistant) or None,
        }
        document = {k: v[:_LIST_LIMIT] if isinstance(v, list) else v for k, v in document.items()}
        return self._capped(
            {k: v for k, v in document.items() if v}, self.summary_tokens, pinned=("user_intent",)
        )

    def _capped(
        self, document: dict[str, Any], limit: int, pinned: tuple[str, ...]
    ) -> dict[str, Any]:
        """Drop the last entries of the longest lists until the JSON fits `limit` tokens."""
        count = self._tokens().count_text
        while count(json.dumps(document)) > limit:
            lists = [k for k, v in document.items() if isinstance(v, list) and k not in pinned]
            longest = max(lists, key=lambda k: (len(document[k]), k), default=None)
            if longest is None or not document[longest]:
                return {k: document[k] for k in pinned if k in document}
            document[longest] = document[longest][:-1]
            if not document[longest]:
                del document[longest]
        return document

    # -- tool pairs -------------------------------------------------------------------------

    def pair_note(self, system: str) -> str:
        """A one-paragraph note on the tool call in a tool-pair prompt."""
        call = _plain(_between(system, "<tool-call>\n", "\n</tool-call>") or system)
        found = _TOOL_REQUEST.search(call)
        name, arguments = (found.group(1), found.group(2)) if found else ("a tool", "")
        response = call.split("tool_response: ", 1)[1] if "tool_response: " in call else ""
        if response.startswith("[error] "):
            first = response.removeprefix("[error] ").splitlines()[:1]
            outcome = f"It failed: {_clip(first[0], 160) if first else 'no message'}"
        else:
            lines = response.splitlines()
            first_line = next((line.strip() for line in lines if line.strip()), "")
            noun = "line" if len(lines) == 1 else "lines"
            outcome = f"It returned {len(lines)} {noun} ({len(response):,} chars)"
            if first_line:
                outcome += f", starting {_clip(first_line, 160)!r}"
        note = f"Called {name} with {_clip(arguments, 200)}. {outcome}."
        count = self._tokens().count_text
        while count(note) > self.note_tokens and len(note) > 1:
            note = note[: max(len(note) * 9 // 10, 1)]
        return note


def _between(text: str, start: str, end: str) -> str:
    head = text.find(start)
    if head < 0:
        return ""
    head += len(start)
    tail = text.rfind(end)
    return text[head:tail] if tail >= head else text[head:]


def _plain(transcript: str) -> str:
    """The JSON-lines transcript (`context_mgmt.format`) as `[role]: part` blocks, which the
    stub reads with plain patterns; lines that are not message records stay as they are."""
    blocks = []
    for line in transcript.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict) and isinstance(record.get("content"), list):
            parts = [str(p) for p in record["content"]]
            blocks.append(f"[{record.get('role')}]: " + "\n".join(parts))
        else:
            blocks.append(line)
    return "\n".join(blocks)


def _blocks(transcript: str) -> list[tuple[str, str]]:
    marks = list(_BLOCK.finditer(transcript))
    return [
        (m.group(1), transcript[m.end() : marks[i + 1].start() if i + 1 < len(marks) else None])
        for i, m in enumerate(marks)
    ]


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _clip(text: str, limit: int = _ENTRY_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
