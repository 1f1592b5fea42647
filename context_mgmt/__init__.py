"""Context management: token counting, compaction, tool-pair summaries, masking, MOIM.

Importing this package is cheap: the tokenizer and the template engine load on first use.
"""

from gosling import quiet_library_loggers
from gosling.context_mgmt.compact import (
    CONTINUATION_TEXTS,
    CompactionResult,
    ContinuationMode,
    compact_messages,
)
from gosling.context_mgmt.compacting_provider import CompactingProvider
from gosling.context_mgmt.context_size import (
    AUTO_COMPACT_THRESHOLD_ENV,
    AUTO_COMPACT_THRESHOLD_KEY,
    DEFAULT_COMPACTION_THRESHOLD,
    ContextSize,
    auto_compact_enabled,
    needs_compaction,
)
from gosling.context_mgmt.errors import CompactionFailed
from gosling.context_mgmt.format import extract_file_history, format_message_for_compacting
from gosling.context_mgmt.ladder import REMOVAL_PERCENTAGES, filter_tool_responses
from gosling.context_mgmt.masking import (
    MASK_BATCH_SIZE,
    MASK_KEEP_LAST,
    MaskingPresenter,
    masked_copy,
    messages_to_mask,
)
from gosling.context_mgmt.pair_summarizer import ToolPairSummarizer, summarize_tool_pair
from gosling.context_mgmt.recall import RECALL_TOOL_NAME, recall_tool_output
from gosling.context_mgmt.structured import FileActivity, StructuredSummary
from gosling.context_mgmt.summarize import Summary, summarize
from gosling.context_mgmt.templates import CompactionTemplates
from gosling.context_mgmt.tool_pairs import (
    TOOL_SUMMARY_KIND,
    TOOLCALL_SUMMARIZATION_BATCH_SIZE,
    PairApplication,
    apply_tool_pair_summaries,
    compute_tool_call_cutoff,
    tool_ids_to_summarize,
)

__all__ = [
    "AUTO_COMPACT_THRESHOLD_ENV",
    "AUTO_COMPACT_THRESHOLD_KEY",
    "CONTINUATION_TEXTS",
    "DEFAULT_COMPACTION_THRESHOLD",
    "MASK_BATCH_SIZE",
    "MASK_KEEP_LAST",
    "RECALL_TOOL_NAME",
    "REMOVAL_PERCENTAGES",
    "TOOLCALL_SUMMARIZATION_BATCH_SIZE",
    "TOOL_SUMMARY_KIND",
    "CompactingProvider",
    "CompactionFailed",
    "CompactionResult",
    "CompactionTemplates",
    "ContextSize",
    "ContinuationMode",
    "FileActivity",
    "MaskingPresenter",
    "PairApplication",
    "StructuredSummary",
    "Summary",
    "ToolPairSummarizer",
    "apply_tool_pair_summaries",
    "auto_compact_enabled",
    "compact_messages",
    "compute_tool_call_cutoff",
    "extract_file_history",
    "filter_tool_responses",
    "format_message_for_compacting",
    "masked_copy",
    "messages_to_mask",
    "needs_compaction",
    "recall_tool_output",
    "summarize",
    "summarize_tool_pair",
    "tool_ids_to_summarize",
]

quiet_library_loggers()
