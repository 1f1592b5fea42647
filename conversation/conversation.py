"""`Conversation`: an ordered list of messages with visibility views."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from gosling.conversation.content import TextContent
from gosling.conversation.fix import fix_agent_view
from gosling.conversation.message import Message


class Conversation:
    """Messages in order. `push` merges a streamed text delta into the last message when both
    share an id, so a renderer can build a reply from its chunks."""

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self.messages: list[Message] = list(messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __len__(self) -> int:
        return len(self.messages)

    def __getitem__(self, index: int) -> Message:
        return self.messages[index]

    def push(self, message: Message) -> None:
        last = self.messages[-1] if self.messages else None
        if last is not None and last.id == message.id:
            self.messages[-1] = _merge_delta(last, message)
        else:
            self.messages.append(message)

    def agent_visible(self) -> list[Message]:
        return [m for m in self.messages if m.metadata.agent_visible]

    def user_visible(self) -> list[Message]:
        return [m for m in self.messages if m.metadata.user_visible]

    def agent_view(self) -> list[Message]:
        """The agent-visible messages, repaired (`fix_agent_view`). Masked messages are still
        shown whole here: `gosling.model_view` (or `gosling.context_mgmt.model_view`) gives
        what a provider is sent, placeholders included."""
        return fix_agent_view(self.messages)[0]


def _merge_delta(last: Message, delta: Message) -> Message:
    if (
        len(delta.content) == 1
        and isinstance(delta.content[0], TextContent)
        and last.content
        and isinstance(last.content[-1], TextContent)
    ):
        joined = TextContent(text=last.content[-1].text + delta.content[0].text)
        return last.with_content((*last.content[:-1], joined))
    return last.with_content((*last.content, *delta.content))
