"""Why a compaction could not happen.

`CompactionFailed` is a `ProviderError`, so code that already reports provider failures
(and `CompactingProvider`, which is a provider) handles it without a special case; `reason`
lets the reply loop tell the kinds apart.
"""

from __future__ import annotations

from typing import Literal

from gosling.providers import ProviderError, Usage

FailureReason = Literal[
    "no_tool_responses",
    "exhausted",
    "empty_summary",
    "overflow_loop",
    "prompt_template",
    "hook_blocked",
    "tool_call_summary",
    "timed_out",
    "summary_too_large",
]


class CompactionFailed(ProviderError):
    """Compaction gave up; the conversation is unchanged. `requests` counts the model calls
    it made before giving up and `usage` what they were billed (replies it could not use
    cost tokens all the same)."""

    def __init__(
        self,
        message: str,
        *,
        reason: FailureReason,
        requests: int = 0,
        usage: Usage | None = None,
    ) -> None:
        super().__init__(message)
        self.reason: FailureReason = reason
        self.requests = requests
        self.usage = usage or Usage()
