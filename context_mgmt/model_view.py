"""`model_view`: the messages a model is sent for a conversation, in one call.

The agent-visible messages, masked ones shown as their placeholders (`MaskingPresenter`),
repaired by `fix_agent_view` (tool calls and results paired, roles alternating, a user
message first). The reply loop builds the same view incrementally (`agent/context_view.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from gosling.context_mgmt.masking import MaskingPresenter
from gosling.conversation import Message, fix_agent_view


def model_view(messages: Sequence[Message]) -> list[Message]:
    """What a provider is sent for `messages`: visibility, masking and pair repair applied."""
    present = MaskingPresenter()
    shown = [present(m) for m in messages if m.metadata.agent_visible]
    return fix_agent_view(shown)[0]
