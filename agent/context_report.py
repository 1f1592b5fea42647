"""`/context`: where the context window goes, and what compaction would do about it now.

`build_context_report` is a pure function of what the next request would carry (system
prompt, hints, agent-visible messages, tool schemas) and the compaction settings, so the
numbers can be checked in tests. `report_for_agent` gathers those inputs from a live agent
without disturbing it: it reads the session's view as it stands and never asks the view to
repair itself (that would drop a trailing assistant reply from the agent's cached view).

The figures are local o200k estimates; `current_tokens` is the agent's best figure (the
provider's own count from the last call plus what was added since), which is what the
auto-compaction threshold is compared with.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from gosling.context_mgmt import CONTINUATION_TEXTS, auto_compact_enabled
from gosling.context_mgmt.compact import CONTINUATION_KIND, PRESERVED_USER_KIND, SUMMARY_KIND
from gosling.context_mgmt.tokens import TOKENS_PER_MESSAGE, TokenCounter
from gosling.context_mgmt.tool_pairs import TOOL_SUMMARY_KIND
from gosling.conversation import Message
from gosling.providers import ToolSpec

if TYPE_CHECKING:
    from gosling.agent.agent import Agent
    from gosling.agent.session import AgentSession
    from gosling.agent.trimmer import TrimOutlook

HINTS_KIND = "hints"
SUMMARY_KINDS = frozenset({SUMMARY_KIND, CONTINUATION_KIND, PRESERVED_USER_KIND, TOOL_SUMMARY_KIND})
SUMMARY_ESTIMATE_TOKENS = 2_000
"""What a compaction summary is assumed to cost before the model has written it. Structured
summaries usually come out at one to three thousand tokens; the real size is the model's."""


@dataclass(frozen=True)
class ContextRow:
    label: str
    tokens: int
    detail: str = ""


@dataclass(frozen=True)
class CompactionOutlook:
    """What compaction would do if it ran now."""

    automatic: bool
    """Compaction runs by itself when the threshold is passed."""
    why_not: str
    """Why it does not (empty when `automatic`)."""
    threshold: float
    threshold_tokens: int | None
    """The context size that triggers it (None when automatic compaction is off)."""
    tokens_until: int | None
    """How far the context is from the trigger (negative: it compacts before the next call)."""
    messages_to_summarize: int
    """Agent-visible messages `/compact` would replace by a summary."""
    tokens_to_summarize: int
    retained_estimate: int
    """Estimated context right after `/compact`: the current figure less the messages, plus
    the summary (assumed `SUMMARY_ESTIMATE_TOKENS` at most) and the continuation note; never
    more than the current figure (equal when a summary would save nothing)."""


@dataclass(frozen=True)
class ContextReport:
    context_limit: int
    rows: tuple[ContextRow, ...]
    """System prompt, hints, messages, tool results, summaries, tool schemas."""
    estimated_tokens: int
    """Sum of the rows: a local estimate of the next request."""
    current_tokens: int
    """The agent's figure for the context (provider-reported when a call has run)."""
    current_source: str
    compaction: CompactionOutlook
    trim: TrimOutlook | None = None
    """What trimming old tool output would do now (masking strategies only)."""
    last_compaction: dict[str, Any] | None = None
    """The stored receipt of the session's latest compaction (with its trigger and sizes)."""

    def tokens_of(self, label: str) -> int:
        return next((row.tokens for row in self.rows if row.label == label), 0)


def build_context_report(
    *,
    system_prompt: str,
    hints_text: str,
    messages: Sequence[Message],
    tool_specs: Sequence[ToolSpec],
    counter: TokenCounter,
    context_limit: int,
    threshold: float,
    current_tokens: int | None = None,
    current_source: str = "estimate",
    compacts_at_threshold: bool = True,
    why_not: str = "",
) -> ContextReport:
    """Tokens by kind for a request with `system_prompt` (which embeds `hints_text`), the
    agent-visible `messages` and `tool_specs`, plus the compaction outlook."""
    visible = [m for m in messages if m.metadata.agent_visible]
    hints = hints_text.strip()
    top_hints = counter.count_text(hints) if hints and hints in system_prompt else 0
    system = counter.count_chat(system_prompt, ()) - top_hints
    subdir_hints = conversation = tool_results = summaries = 0
    conversation_messages = results = 0
    for message in visible:
        tokens = counter.count_message(message)
        kind = message.metadata.kind
        if kind == HINTS_KIND:
            subdir_hints += tokens
        elif kind in SUMMARY_KINDS:
            summaries += tokens
        elif message.effective_role == "tool":
            tool_results += tokens
            results += len(message.tool_responses)
        else:
            conversation += tokens
            conversation_messages += 1
    schemas = counter.count_tools(tool_specs)
    hint_detail = f"{top_hints:,} in the system prompt, {subdir_hints:,} from subdirectories"
    rows = (
        ContextRow("system prompt", system),
        ContextRow("hints", top_hints + subdir_hints, hint_detail),
        ContextRow("messages", conversation, _plural(conversation_messages, "message")),
        ContextRow("tool results", tool_results, _plural(results, "result")),
        ContextRow("summaries", summaries),
        ContextRow("tool schemas", schemas, _plural(len(tool_specs), "tool")),
    )
    estimated = sum(row.tokens for row in rows)
    current = estimated if current_tokens is None else current_tokens
    in_messages = subdir_hints + conversation + tool_results + summaries
    continuation = counter.count_text(CONTINUATION_TEXTS["manual"]) if visible else 0
    summary = (
        min(in_messages, SUMMARY_ESTIMATE_TOKENS)
        + continuation
        + (2 * TOKENS_PER_MESSAGE if visible else 0)  # the summary and continuation
    )
    # What stays is the current figure less what the summary saves, so the forecast is in
    # the same units as the "Context: ~N" line (a provider's count or the local estimate)
    # and never more than there is now.
    retained = max(current - (in_messages - summary), summary) if in_messages > summary else current
    automatic = compacts_at_threshold and auto_compact_enabled(threshold) and context_limit > 0
    if not automatic and not why_not:
        why_not = (
            "auto_compact_threshold is off"
            if compacts_at_threshold
            else "the context strategy compacts only on overflow"
        )
    threshold_tokens = math.floor(context_limit * threshold) if automatic else None
    outlook = CompactionOutlook(
        automatic=automatic,
        why_not="" if automatic else why_not,
        threshold=threshold,
        threshold_tokens=threshold_tokens,
        tokens_until=None if threshold_tokens is None else threshold_tokens - current,
        messages_to_summarize=len(visible),
        tokens_to_summarize=in_messages,
        retained_estimate=retained,
    )
    return ContextReport(context_limit, rows, estimated, current, current_source, outlook)


def report_for_agent(agent: Agent, session: AgentSession) -> ContextReport:
    """The report for the request `agent` would send next in `session`: the session's own
    system prompt and tool schemas, and its pipeline's explanation of what it will do."""
    prefix = agent.request_prefix(session)
    session.view.sync(session.messages)
    view = session.view.messages()
    check = session.pipeline.explain(view)
    # Until the pipeline has a better figure than a local estimate, the report's own
    # estimate (the sum of its rows) stands.
    report = build_context_report(
        system_prompt=prefix.system_prompt,
        hints_text=prefix.hints,
        messages=view,
        tool_specs=prefix.tool_specs,
        counter=agent.counter,
        context_limit=agent.provider.model_config.context_limit,
        threshold=agent.config.auto_compact_threshold,
        current_tokens=None if check.source == "estimate" else check.tokens,
        current_source=check.source,
        compacts_at_threshold=check.automatic,
        why_not="" if check.automatic else check.reason,
    )
    from gosling.context_mgmt.receipt import RECEIPTS_KEY

    receipts = session.extension_data.get(RECEIPTS_KEY)
    last = receipts[-1] if isinstance(receipts, list) and receipts else None
    return replace(
        report,
        trim=session.pipeline.trim_outlook(session),
        last_compaction=last if isinstance(last, dict) else None,
    )


def format_context_report(report: ContextReport) -> str:
    """The report as aligned plain lines for a terminal."""
    limit = report.context_limit
    lines = [
        f"Context: ~{report.current_tokens:,} of {limit:,} tokens "
        f"({_percent(report.current_tokens, limit)}; {_source(report.current_source)})",
    ]
    for row in report.rows:
        share = _percent(row.tokens, limit)
        detail = f"  {row.detail}" if row.detail else ""
        lines.append(f"  {row.label:<14}{row.tokens:>10,}  {share:>6}{detail}")
    lines.append(f"  {'estimate':<14}{report.estimated_tokens:>10,}  (local count of the above)")
    outlook = report.compaction
    if outlook.automatic and outlook.threshold_tokens is not None:
        until = outlook.tokens_until or 0
        when = (
            f"{until:,} tokens to go"
            if until > 0
            else "over it: compacts before the next model call"
        )
        lines.append(
            f"Auto-compaction at {outlook.threshold:.0%} of the window "
            f"({outlook.threshold_tokens:,} tokens): {when}."
        )
    else:
        lines.append(f"Auto-compaction is off: {outlook.why_not}.")
    if outlook.messages_to_summarize and outlook.retained_estimate < report.current_tokens:
        lines.append(
            f"/compact now would summarize {_plural(outlook.messages_to_summarize, 'message')} "
            f"(~{outlook.tokens_to_summarize:,} tokens) and keep ~{outlook.retained_estimate:,} "
            f"of ~{report.current_tokens:,} tokens (system prompt, hints, tool schemas, "
            "the summary)."
        )
    elif outlook.messages_to_summarize:
        lines.append(
            f"/compact now would not make the context smaller: its "
            f"{_plural(outlook.messages_to_summarize, 'message')} (~{outlook.tokens_to_summarize:,}"
            " tokens) are about the size of a summary."
        )
    else:
        lines.append("/compact has nothing to summarize yet.")
    if report.trim is not None:
        lines.append(_trim_line(report.trim))
    if report.last_compaction is not None:
        lines.extend(receipt_lines(report.last_compaction))
    return "\n".join(lines)


def receipt_lines(stored: dict[str, Any]) -> list[str]:
    """A stored compaction receipt expanded: the one line, then every dropped entry."""
    from gosling.context_mgmt.receipt import CompactionReceipt

    receipt = CompactionReceipt.from_json(stored)
    before, after = stored.get("tokens_before", 0), stored.get("tokens_after", 0)
    lines = [
        f"Last compaction ({stored.get('trigger', '?')}, ~{before:,} → ~{after:,} tokens): "
        f"{receipt.line()}."
    ]
    lines += [f"  dropped {row}" for row in receipt.details()]
    if receipt.dropped > len(receipt.details()):
        lines.append(f"  ({receipt.dropped - len(receipt.details())} more not listed)")
    if receipt.dropped:
        lines.append("  The originals are kept: context__recall brings any of them back.")
    return lines


def _trim_line(trim: TrimOutlook) -> str:
    if trim.saved_tokens <= 0:
        return "Old tool output: nothing to mask or fold yet."
    line = f"Old tool output: ~{trim.saved_tokens:,} tokens could be masked or folded now"
    if trim.cache == "none":
        return line + " (no prompt cache to lose: the next call does it)."
    calls = math.ceil(trim.break_even_calls)
    return (
        f"{line}; doing it re-sends ~{trim.resent_tokens:,} tokens past the prompt cache once, "
        f"which pays back after {calls:,} call{'s' if calls != 1 else ''}. gosling waits until "
        f"keeping them has cost {trim.patience:g}x that (trim_patience)."
    )


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _percent(tokens: int, limit: int) -> str:
    return f"{100 * tokens / limit:.1f}%" if limit > 0 else "-"


def _source(source: str) -> str:
    return {
        "reported": "as the provider counted it, plus new messages",
        "retained": "estimated after the last compaction",
        "stored": "as this session last recorded it, plus new messages",
        "estimate": "local estimate",
    }.get(source, source)
