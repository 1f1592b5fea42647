"""Tool-pair summarization, the pure decisions: old tool calls and their results become
one-line model summaries (reference §7, generation T4).

- `compute_tool_call_cutoff` — how many tool calls stay verbatim, from the context window;
- `tool_ids_to_summarize` — which calls to summarize now: the oldest batch of ten, once more
  than `cutoff + 10` calls (not counting the current turn's) are in the agent's view;
- `apply_tool_pair_summaries` — hide summarized pairs and add the notes to the agent's view.

The model call and the background batches are `context_mgmt.pair_summarizer`.

Pair safety. Tool calls are grouped the way they share messages: a parallel batch (one
assistant message with several requests, answered together) is one group. A group is hidden
only when every call in it has a summary, each call has both its request (in an assistant
message) and its response (in a user message) in the view, and its user messages carry
nothing but tool responses (a user's own words are never hidden). Hiding a group must also
leave a valid seam: the messages on either side of it must not end up as two user messages
(or two tool-result messages) in a row, which is what hiding a pair between a user message
and a hints message would do. Such a group is dropped and stays as it is.

Where the notes go. The session store only appends, so a note cannot sit where its pair was.
The notes of one application go into ONE agent-only user message (kind `tool_summary`)
appended at the end, and only while the conversation ends with a tool-result message: a user
text right after tool results is valid, and the next message will be the model's reply.
Otherwise (the conversation ends with a user message or a hints message) the summaries wait
for the next tool results. Each application folds the earlier visible notes into the new
one (they are hidden and their text carried over, oldest first), so the view holds at most
one note message, and hiding pairs next to an older note cannot leave two user messages side
by side.

A turn that stops right after a note was added (cancelled, failed) leaves the note followed by
the user's next message. The next application parks it (hides it) so the view stays valid,
and brings its text back with the next note. A parked note is an agent-invisible
`tool_summary` message that no later message lists in its `source_ids`; notes older than the
last compaction are not brought back, since the compaction summary covers them.

With these rules `fix_conversation` finds nothing to repair in a valid view after an
application (the property tests in tests/context_mgmt/test_pipeline_properties.py check it).
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from gosling.context_mgmt.compact import SUMMARY_KIND
from gosling.context_mgmt.context_size import DEFAULT_COMPACTION_THRESHOLD
from gosling.conversation import (
    Content,
    Message,
    MessageMetadata,
    TextContent,
    ToolRequest,
    ToolResponse,
)

TOOLCALL_SUMMARIZATION_BATCH_SIZE = 10
MAX_SUMMARY_BATCH = 50
"""The most tool pairs one cost-chosen batch summarizes."""
MIN_TOOL_CALL_CUTOFF = 10
MAX_TOOL_CALL_CUTOFF = 500


# -- when and what ----------------------------------------------------------------------------


def compute_tool_call_cutoff(context_limit: int, threshold: float) -> int:
    """Tool calls kept verbatim before older ones are summarized.

    `threshold` (the auto-compact share) counts when `0 < threshold <= 1`, else 0.8 is used;
    the effective window is `floor(context_limit * threshold)`, and the cutoff is
    `3 * effective // 20_000` clamped to 10..500 (128k at 0.8 gives 15; 1M gives 120).
    """
    share = threshold if 0 < threshold <= 1 else DEFAULT_COMPACTION_THRESHOLD
    effective = math.floor(context_limit * share)
    return min(max((3 * effective) // 20_000, MIN_TOOL_CALL_CUTOFF), MAX_TOOL_CALL_CUTOFF)


def tool_ids_to_summarize(
    messages: Sequence[Message],
    cutoff: int,
    protect_last_n: int,
    *,
    exclude: Collection[str] = (),
    batch: int = TOOLCALL_SUMMARIZATION_BATCH_SIZE,
) -> list[str]:
    """The oldest `batch` tool call ids of the agent view, or none.

    Ids are the tool requests of agent-visible messages in order; the last `protect_last_n`
    (the current turn's calls) are never eligible. Nothing is chosen until more than
    `cutoff + batch` calls are eligible, so summaries come in whole batches. `exclude` (ids
    already summarized, in flight, or failing) is skipped; the choice then stays among the
    calls older than the `cutoff` most recent eligible ones. `batch` 0: every eligible call
    older than the `cutoff` most recent ones, up to `MAX_SUMMARY_BATCH` (when the cost model
    picks the moment, `agent.context_pipeline`).
    """
    ids = [r.id for m in messages if m.metadata.agent_visible for r in m.tool_requests]
    eligible = max(len(ids) - max(protect_last_n, 0), 0)
    if batch <= 0:
        return [i for i in ids[: max(eligible - cutoff, 0)] if i not in exclude][:MAX_SUMMARY_BATCH]
    if eligible <= cutoff + batch:
        return []
    if not exclude:
        return ids[:batch]
    return [i for i in ids[: eligible - cutoff] if i not in exclude][:batch]


# -- applying summaries ------------------------------------------------------------------------

TOOL_SUMMARY_KIND = "tool_summary"

PairStatus = Literal["applied", "waiting", "dropped"]
"""applied: the pair is hidden behind its note. waiting: not now (a sibling call of the same
parallel batch has no summary yet, or the conversation does not end with tool results).
dropped: never (the pair is gone from the view, incomplete, or cannot be hidden safely)."""


@dataclass(frozen=True)
class PairApplication:
    """The outcome of applying summaries to a conversation."""

    messages: tuple[Message, ...]
    """The whole conversation: flipped originals, then the appended note if any."""
    flipped_ids: tuple[str, ...]
    """Messages made agent-invisible (pairs, and earlier notes folded into the new one)."""
    appended: tuple[Message, ...]
    """The new note message (zero or one)."""
    status: Mapping[str, PairStatus]
    """What happened to each summary given, by tool call id."""

    @property
    def changed(self) -> bool:
        return bool(self.flipped_ids or self.appended)

    def ids(self, status: PairStatus) -> list[str]:
        return [tool_id for tool_id, s in self.status.items() if s == status]


@dataclass(frozen=True)
class _Group:
    positions: tuple[int, ...]
    tool_ids: tuple[str, ...]
    """In the order of their requests."""


def apply_tool_pair_summaries(
    messages: Sequence[Message], summaries: Mapping[str, Message]
) -> PairApplication:
    """Hide the summarized pairs that can be hidden safely and append their notes.

    `summaries` maps tool call ids to `summarize_tool_pair` results. Returns the whole new
    conversation, what was flipped and appended, and the status of every summary (see the
    module docstring for where the note goes and why)."""
    view_index = [i for i, m in enumerate(messages) if m.metadata.agent_visible]
    view = [messages[i] for i in view_index]
    links = _Links(len(view))

    parked_now = [
        k
        for k, m in enumerate(view)
        if _is_note(m) and _misplaced(view, links, k) and links.try_remove(view, [k])
    ]
    parked = _parked_notes(messages)

    usable = {i: m for i, m in summaries.items() if m.text.strip()}
    groups, status = _groups(view, usable)
    status.update(dict.fromkeys((i for i in summaries if i not in usable), "dropped"))
    end = links.tail
    while end != -1 and _is_note(view[end]):
        end = links.prev[end]
    slot = end != -1 and view[end].effective_role == "tool"
    ready: list[_Group] = []
    for group in groups:
        if slot and end not in group.positions:
            ready.append(group)
        else:
            status.update(dict.fromkeys(group.tool_ids, "waiting"))

    folded: list[int] = []
    applied: list[_Group] = []
    if ready or (slot and (parked or parked_now)):
        folded = [
            k
            for k in range(len(view))
            if _is_note(view[k]) and k not in links.gone and links.try_remove(view, [k])
        ]
        for group in sorted(ready, key=lambda g: g.positions[0]):
            fits = links.try_remove(view, list(group.positions))
            status.update(dict.fromkeys(group.tool_ids, "applied" if fits else "dropped"))
            if fits:
                applied.append(group)
        if not applied and not (parked or parked_now):
            folded = []  # nothing new to say: leave the current note where it is

    hidden = [*parked_now, *folded, *(k for g in applied for k in g.positions)]
    flipped = sorted(view_index[k] for k in hidden)
    flip_set = set(flipped)
    out = [m.with_agent_invisible() if i in flip_set else m for i, m in enumerate(messages)]

    appended: tuple[Message, ...] = ()
    if slot and (applied or folded or parked or parked_now):
        carried = sorted({*parked, *(view_index[k] for k in [*parked_now, *folded])})
        appended = (_note(messages, carried, applied, view, usable, view[end]),)
    return PairApplication(
        messages=(*out, *appended),
        flipped_ids=tuple(messages[i].id for i in flipped),
        appended=appended,
        status=status,
    )


def _note(
    messages: Sequence[Message],
    carried: list[int],
    applied: list[_Group],
    view: list[Message],
    summaries: Mapping[str, Message],
    after: Message,
) -> Message:
    parts: list[Content] = []
    sources: list[str] = []
    for i in carried:
        parts.extend(p for p in messages[i].content if isinstance(p, TextContent))
        sources.append(messages[i].id)
    for group in applied:
        for tool_id in group.tool_ids:
            parts.extend(p for p in summaries[tool_id].content if isinstance(p, TextContent))
        sources.extend(view[k].id for k in group.positions)
    meta = MessageMetadata.agent_only().with_kind(TOOL_SUMMARY_KIND, list(dict.fromkeys(sources)))
    created = max(int(time.time()), after.created)
    return Message(role="user", content=tuple(parts), metadata=meta, created=created)


def ends_with_misplaced_note(messages: Sequence[Message]) -> bool:
    """Whether the newest note is followed by something other than the model's reply (a turn
    stopped after the note was added, then the user wrote): the next application must park
    it even when no summary is ready. Looks only at the tail after the last assistant reply."""
    after: Message | None = None
    for message in reversed(messages):
        if not message.metadata.agent_visible:
            continue
        if _is_note(message):
            return after is not None and after.role != "assistant"
        if message.role == "assistant":
            return False
        after = message
    return False


def _is_note(message: Message) -> bool:
    return message.metadata.kind == TOOL_SUMMARY_KIND


def _misplaced(view: list[Message], links: _Links, k: int) -> bool:
    """A note belongs right after tool results, followed by the model's reply (or nothing)."""
    before, after = links.prev[k], links.next[k]
    if before == -1 or view[before].effective_role != "tool":
        return True
    return after != -1 and view[after].role != "assistant"


def _parked_notes(messages: Sequence[Message]) -> list[int]:
    """Indices of hidden notes that nothing replaced, newer than the last compaction."""
    start = 0
    referenced: set[str] = set()
    for i, message in enumerate(messages):
        referenced.update(message.metadata.source_ids)
        if message.metadata.kind == SUMMARY_KIND:
            start = i + 1
    return [
        i
        for i in range(start, len(messages))
        if _is_note(messages[i])
        and not messages[i].metadata.agent_visible
        and messages[i].id not in referenced
    ]


def _groups(
    view: list[Message], summaries: Mapping[str, Message]
) -> tuple[list[_Group], dict[str, PairStatus]]:
    """Complete, well-formed groups of summarized calls, and the status of the rest."""
    holders: dict[str, list[int]] = {}
    for k, message in enumerate(view):
        for part in message.content:
            if isinstance(part, ToolRequest | ToolResponse):
                where = holders.setdefault(part.id, [])
                if not where or where[-1] != k:
                    where.append(k)
    status: dict[str, PairStatus] = {}
    groups: list[_Group] = []
    seen: set[str] = set()
    for tool_id in summaries:
        if tool_id in seen:
            continue
        if tool_id not in holders:
            status[tool_id] = "dropped"
            continue
        ids, positions = _connected(view, holders, tool_id)
        seen |= ids
        summarized = [i for i in ids if i in summaries]
        if len(summarized) < len(ids):
            status.update(dict.fromkeys(summarized, "waiting"))
        elif not _well_formed(view, positions, ids):
            status.update(dict.fromkeys(summarized, "dropped"))
        else:
            ordered = tuple(
                dict.fromkeys(r.id for k in sorted(positions) for r in view[k].tool_requests)
            )
            groups.append(_Group(tuple(sorted(positions)), ordered))
    return groups, status


def _connected(
    view: list[Message], holders: dict[str, list[int]], tool_id: str
) -> tuple[set[str], set[int]]:
    ids = {tool_id}
    positions: set[int] = set()
    queue = [tool_id]
    while queue:
        for k in holders[queue.pop()]:
            if k in positions:
                continue
            positions.add(k)
            for part in view[k].content:
                if isinstance(part, ToolRequest | ToolResponse) and part.id not in ids:
                    ids.add(part.id)
                    queue.append(part.id)
    return ids, positions


def _well_formed(view: list[Message], positions: set[int], ids: set[str]) -> bool:
    requested: set[str] = set()
    answered: set[str] = set()
    for k in positions:
        message = view[k]
        for part in message.content:
            if message.role == "assistant":
                if isinstance(part, ToolResponse):
                    return False
                if isinstance(part, ToolRequest):
                    requested.add(part.id)
            elif isinstance(part, ToolResponse):
                answered.add(part.id)
            else:
                return False
    return requested == ids and answered == ids


def _joinable(before: Message | None, after: Message | None) -> bool:
    """May `before` be directly followed by `after` in a valid agent view?"""
    if before is None:
        return after is not None and after.effective_role == "user"
    if after is None:
        return before.role == "user"
    if before.effective_role == after.effective_role:
        return False
    if after.effective_role == "tool":
        return before.role == "assistant"
    return not (before.role == "assistant" and before.tool_requests)


class _Links:
    """The view as a doubly linked list of positions, so hiding is O(1) per message."""

    def __init__(self, size: int) -> None:
        self.prev = list(range(-1, size - 1))
        self.next: list[int] = [*range(1, size), -1] if size else []
        self.tail = size - 1
        self.gone: set[int] = set()

    def try_remove(self, view: list[Message], positions: list[int]) -> bool:
        """Unlink `positions` if every seam this leaves is valid; else change nothing."""
        gone = set(positions)
        for k in positions:
            before, after = self.prev[k], self.next[k]
            while before != -1 and before in gone:
                before = self.prev[before]
            while after != -1 and after in gone:
                after = self.next[after]
            if not _joinable(
                view[before] if before != -1 else None, view[after] if after != -1 else None
            ):
                return False
        for k in positions:
            before, after = self.prev[k], self.next[k]
            if before != -1:
                self.next[before] = after
            if after != -1:
                self.prev[after] = before
            if k == self.tail:
                self.tail = before
        self.gone.update(positions)
        return True
