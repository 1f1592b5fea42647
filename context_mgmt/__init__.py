"""Context management: token counting, compaction, tool-pair summaries, masking, MOIM.

Importing this package is cheap: the tokenizer and the template engine load on first use.
"""

from context_mgmt.compact import (
    CONTINUATION_TEXTS,
    CompactionResult,
    ContinuationMode,
    compact_messages,
)
from context_mgmt.compacting_provider import CompactingProvider
from context_mgmt.errors import CompactionFailed
from context_mgmt.format import extract_file_history, format_message_for_compacting
from context_mgmt.guard import MAX_OVERFLOW_COMPACTIONS, ContextBudget, ContextCheck
from context_mgmt.ladder import REMOVAL_PERCENTAGES, filter_tool_responses
from context_mgmt.structured import FileActivity, StructuredSummary
from context_mgmt.summarize import Summary, summarize
from context_mgmt.threshold import (
    AUTO_COMPACT_THRESHOLD_ENV,
    AUTO_COMPACT_THRESHOLD_KEY,
    DEFAULT_COMPACTION_THRESHOLD,
    auto_compact_enabled,
    needs_compaction,
)

__all__ = [
    "AUTO_COMPACT_THRESHOLD_ENV",
    "AUTO_COMPACT_THRESHOLD_KEY",
    "CONTINUATION_TEXTS",
    "DEFAULT_COMPACTION_THRESHOLD",
    "MAX_OVERFLOW_COMPACTIONS",
    "REMOVAL_PERCENTAGES",
    "CompactingProvider",
    "CompactionFailed",
    "CompactionResult",
    "ContextBudget",
    "ContextCheck",
    "ContinuationMode",
    "FileActivity",
    "StructuredSummary",
    "Summary",
    "auto_compact_enabled",
    "compact_messages",
    "extract_file_history",
    "filter_tool_responses",
    "format_message_for_compacting",
    "needs_compaction",
    "summarize",
]
