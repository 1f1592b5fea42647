"""`ContextView`: the agent's view of a session, kept up to date between model calls.

The view is what the model is sent: agent-visible messages, masked ones shown as their
placeholders, repaired by `fix_conversation`. Rebuilding it and recounting its tokens on every
call would cost O(history); instead the view is extended with new messages and only the new
tail is checked and counted. Any visibility change (compaction, masking, tool-pair summaries)
asks for a rebuild, which is rare.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gosling.context_mgmt.tokens import TokenCounter
from gosling.conversation import Message, extends_valid_view, fix_agent_view

Presenter = Callable[[Message], Message]


def _as_is(message: Message) -> Message:
    return message


class ContextView:
    def __init__(self, counter: TokenCounter, present: Presenter = _as_is) -> None:
        self._counter = counter
        self._present = present
        self._view: list[Message] = []
        self._tokens = 0
        self._consumed = 0
        """How many session messages the view has taken in."""
        self._checked = 0
        """How many view messages are known to form a valid prefix."""
        self.generation = 0
        """Changes whenever the view is rebuilt rather than extended (positions in it moved)."""
        self.repairs: list[str] = []
        """Every issue `fix_conversation` reported when the view needed repair, oldest
        first (a valid pipeline leaves it empty; the replay checks it per call)."""

    def invalidate(self) -> None:
        """Forget everything; the next `sync` rebuilds from the whole session."""
        self.generation += 1
        self._view = []
        self._tokens = 0
        self._consumed = 0
        self._checked = 0

    def sync(self, messages: Sequence[Message]) -> None:
        """Take in messages appended to the session since the last sync."""
        if len(messages) < self._consumed:
            self.invalidate()
        present, count = self._present, self._counter.count_message
        for message in messages[self._consumed :]:
            if message.metadata.agent_visible:
                shown = present(message)
                self._view.append(shown)
                self._tokens += count(shown)
        self._consumed = len(messages)

    def request_messages(self, messages: Sequence[Message]) -> list[Message]:
        """The messages to send now: valid, with every tool call answered."""
        self.sync(messages)
        tail = self._view[self._checked :]
        previous = self._view[self._checked - 1] if self._checked else None
        if tail and extends_valid_view(previous, tail) and (previous or tail[0].role == "user"):
            self._checked = len(self._view)
            return list(self._view)
        if not tail and self._checked:
            return list(self._view)
        fixed, issues = fix_agent_view(self._view)
        self.generation += 1
        self.repairs += issues
        self._view = fixed
        self._tokens = self._counter.count_messages(fixed)
        self._checked = len(fixed)
        return list(fixed)

    @property
    def tokens(self) -> int:
        """Tokens of the view's messages (without system prompt and tools)."""
        return self._tokens

    def messages(self) -> list[Message]:
        """The view as it stands (may end mid-turn, unrepaired)."""
        return list(self._view)
