"""The removal ladder: which tool responses to leave out when the summarizer overflows
(reference §4.4).

Tool responses are the bulk of most long sessions and the least needed verbatim. The first
and last ones frame the task (what was looked at first, where the work stopped), so removal
starts in the middle and works outward.
"""

from __future__ import annotations

from collections.abc import Sequence

from gosling.conversation import Message, ToolResponse

REMOVAL_PERCENTAGES: tuple[int, ...] = (0, 10, 20, 50, 100)
"""Share of tool-response messages left out at each rung of the summarize ladder."""


def tool_response_positions(messages: Sequence[Message]) -> list[int]:
    """Indices of the messages that carry at least one tool response."""
    return [
        i
        for i, message in enumerate(messages)
        if any(isinstance(part, ToolResponse) for part in message.content)
    ]


def removal_order(count: int) -> list[int]:
    """Positions 0..count-1 ordered by distance from the centre, ties to the earlier one.

    For ten positions this is 4, 5, 3, 6, 2, 7, 1, 8, 0, 9; for an odd count the centre goes
    first, and every position appears, so removing 100% really removes all.
    """
    doubled_centre = count - 1
    return sorted(range(count), key=lambda pos: (abs(2 * pos - doubled_centre), pos))


def filter_tool_responses(messages: Sequence[Message], remove_percent: int) -> list[Message]:
    """`messages` without `remove_percent`% of their tool-response messages (whole messages),
    middle first; any rung above 0 removes at least one."""
    if not 0 <= remove_percent <= 100:
        raise ValueError(f"remove_percent must be between 0 and 100, got {remove_percent}")
    positions = tool_response_positions(messages)
    if remove_percent == 0 or not positions:
        return list(messages)
    count = max(1, len(positions) * remove_percent // 100)
    dropped = {positions[pos] for pos in removal_order(len(positions))[:count]}
    return [m for i, m in enumerate(messages) if i not in dropped]
