"""Replay a recorded session through the context pipeline, offline.

A transcript (any format `sessions.importers` reads) is walked as if it were live: every
assistant message in it is one model call. Before each call the policy of the chosen
strategy runs exactly as the reply loop runs it: the same `ContextTrimmer`
(`context_mgmt.trimming`) decides masking and tool-pair summaries, then the same budget:

1. masking (`mask`, `hybrid`): when the masked set's batch step moves, `messages_to_mask`
   flags old tool results and the view shows their placeholders;
2. tool-pair summaries (`summarize`): summaries ready from the batch scheduled before the
   previous call are applied (`ToolPairSummarizer.apply_ready`), then the next batch is
   scheduled; the current turn's calls are protected as the loop protects them;
3. the threshold check (`ContextBudget.check`) and, for `summarize` and `hybrid`, compaction;
4. the request: agent-visible messages, masked ones as placeholders, repaired by
   `fix_agent_view`, plus the per-turn context block. Its tokens (`count_chat` with the
   system prompt) are what the call "sends". Over the window, `none` records an overflow (a
   provider would reject it); the other strategies compact and retry, as the loop does.

Then the transcript's assistant message and what followed it (tool results, the next user
message) are appended, and the budget records the call as a provider would report it.

The replay differs from a live run in three ways, all on purpose: the replies are the
recorded ones (a model that saw a compacted context might have answered differently); a
summary batch is ready one call after it was scheduled (the loop's best case); and the tools'
schemas are unknown, so requests count the system prompt and messages only. Source defects
(empty tool results, unanswered calls, adjacent user messages) are repaired once up front,
the way a live session would have stored them, and listed in `source_repairs`; after that, a
view `fix_conversation` has to repair is the pipeline's fault and marks the call invalid.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from context_mgmt.compact import compact_messages
from context_mgmt.guard import ContextBudget
from context_mgmt.masking import MaskingCache, apply_masking
from context_mgmt.replay_results import (
    DEFAULT_REPLAY_CONTEXT_LIMIT,
    REPLAY_STRATEGIES,
    CallEvent,
    ReplayCall,
    ReplayOptions,
    ReplayStrategy,
    StrategyReplay,
    SystemPromptSource,
    TranscriptReplay,
)
from context_mgmt.strategy import ContextPlan, context_plan
from context_mgmt.trimming import ContextTrimmer, apply_changes
from context_mgmt.turn_context import TurnContext, format_turn_context, with_turn_context
from conversation import Message, fix_agent_view, fix_conversation
from providers import Provider, ProviderError, Usage

if TYPE_CHECKING:
    from context_mgmt.tokens import TokenCounter
    from sessions.importers import ImportedTranscript

__all__ = [
    "DEFAULT_REPLAY_CONTEXT_LIMIT",
    "REPLAY_STRATEGIES",
    "CallEvent",
    "ReplayCall",
    "ReplayError",
    "ReplayOptions",
    "ReplayStrategy",
    "StrategyReplay",
    "SystemPromptSource",
    "TranscriptReplay",
    "prepare_messages",
    "replay_file",
    "replay_messages",
    "replay_transcript",
    "stand_in_system_prompt",
    "strategy_plan",
]

REPLAY_MAX_TURNS = 1_000
"""The loop's default `max_turns`, shown in the per-turn context block."""
REPLAY_NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
"""The time the per-turn context shows, fixed so replays are byte-for-byte repeatable."""
STAND_IN_WORKING_DIR = "/workspace"


class ReplayError(ValueError):
    """A transcript cannot be replayed (no model calls, no such run)."""


# -- preparing a transcript -------------------------------------------------------------------


def prepare_messages(messages: Sequence[Message]) -> tuple[list[Message], list[str]]:
    """The transcript as a live session would have stored it: everything before the last
    model call repaired once by `fix_conversation` (the last reply and what follows it are
    never sent, so they stay as recorded). Returns the messages and the repairs made."""
    last = max(
        (i for i, m in enumerate(messages) if m.role == "assistant" and m.metadata.agent_visible),
        default=None,
    )
    if last is None:
        return list(messages), []
    fixed, issues = fix_conversation(messages[:last])
    return [*fixed, *messages[last:]], issues


def strategy_plan(strategy: ReplayStrategy) -> ContextPlan:
    """What the loop does under `strategy`; `none` does nothing at all."""
    if strategy == "none":
        return ContextPlan(False, False, False, False)
    return context_plan(strategy)


def stand_in_system_prompt() -> str:
    """gosling's own system prompt with fixed inputs, for transcripts that carry none."""
    from prompts import render

    return render(
        "system.md",
        date=REPLAY_NOW.strftime("%Y-%m-%d %H:00 %Z"),
        working_dir=STAND_IN_WORKING_DIR,
        os="Linux",
        tool_names=[],
        chat_mode=False,
        extensions_instructions="",
        hints="",
    )


def _starts_turn(message: Message) -> bool:
    """A user's own words start a turn of the reply loop (`Agent.reply`)."""
    meta = message.metadata
    return (
        message.role == "user"
        and meta.agent_visible
        and meta.user_visible
        and meta.kind is None
        and message.has_text_only()
    )


def _visible_tool_calls(messages: Iterable[Message]) -> int:
    return sum(len(m.tool_requests) for m in messages if m.metadata.agent_visible)


# -- one strategy -----------------------------------------------------------------------------


class _Replay:
    """The reply loop's context policy over a recorded conversation (one strategy)."""

    def __init__(
        self,
        strategy: ReplayStrategy,
        summarizer: Provider,
        options: ReplayOptions,
        system_prompt: str,
        counter: TokenCounter,
    ) -> None:
        self.strategy = strategy
        self.plan = strategy_plan(strategy)
        self.provider = summarizer
        self.options = options
        self.system = system_prompt
        self.counter = counter
        overhead = counter.count_chat(system_prompt, [])
        self.budget = ContextBudget(
            options.context_limit, options.threshold, overhead_tokens=overhead, counter=counter
        )
        self.trimmer = ContextTrimmer(
            self.plan,
            summarizer,
            keep_last=options.keep_last,
            cutoff=options.cutoff,
            threshold=options.threshold,
            counter=counter,
        )
        self.messages: list[Message] = []
        self.calls: list[ReplayCall] = []
        self.cache = MaskingCache()
        self.turn_calls = 0
        self.turn_tool_calls = 0
        self.context_tokens = 0
        self.events: list[CallEvent] = []
        self.compactions = 0
        self.overflow_compactions = 0
        self.pair_summaries = 0
        self.masked_results = 0
        self.side_calls = 0
        self.side_input_tokens = 0
        self.failures: list[str] = []

    async def run(self, messages: Sequence[Message]) -> StrategyReplay:
        try:
            for message in messages:
                if message.role == "assistant" and message.metadata.agent_visible:
                    await self._call(message)
                    continue
                self.messages.append(message)
                if _starts_turn(message):
                    self.turn_calls = 0
                    self.turn_tool_calls = 0
        finally:
            await self.trimmer.close()
        return StrategyReplay(
            strategy=self.strategy,
            calls=tuple(self.calls),
            compactions=self.compactions,
            overflow_compactions=self.overflow_compactions,
            pair_summaries=self.pair_summaries,
            masked_results=self.masked_results,
            side_calls=self.side_calls,
            side_input_tokens=self.side_input_tokens,
            failures=tuple(self.failures),
        )

    # -- before the call (agent.context_policy.ContextPolicy.before_call) ------------------

    async def _before_call(self) -> None:
        await self.trimmer.wait_for_summaries()
        calls = _visible_tool_calls(self.messages)
        changes = self.trimmer.step(self.messages, calls, self.turn_tool_calls)
        if changes.changed:
            self.messages = apply_changes(self.messages, changes)
        if changes.masked_tool_ids:
            self.masked_results += sum(1 for m in changes.flips.values() if m.masked)
            self.events.append("masked")
        if changes.summarized_tool_ids:
            self.pair_summaries += len(changes.summarized_tool_ids)
            self.events.append("pair_summaries")
        for usage in changes.usage:
            self._side(usage, 1)
        check = self.budget.check(self._view()[0])
        if check.compact and self.plan.compact_at_threshold:
            await self._compact(overflow=False)

    # -- the call (agent.agent.Agent._call_model) ------------------------------------------

    async def _call(self, reply: Message) -> None:
        self.events = []
        await self._before_call()
        while True:
            view, issues, masked = self._view()
            request = with_turn_context(view, self._turn_context())
            tokens = self.counter.count_chat(self.system, request)
            over = tokens > self.options.context_limit
            if over and self.plan.compact_on_overflow:
                self.events.append("overflow")
                try:
                    self.budget.begin_overflow_compaction()
                except ProviderError as exc:
                    self._fail(exc)
                else:
                    if await self._compact(overflow=True):
                        continue
            elif over:
                self.events.append("overflow")
            break
        self.calls.append(
            ReplayCall(
                call=len(self.calls) + 1,
                tokens=tokens,
                messages=len(view),
                masked_tokens=masked,
                events=tuple(self.events),
                overflow=over,
                issues=tuple(issues),
            )
        )
        self.turn_calls += 1
        self.turn_tool_calls += len(reply.tool_requests)
        self.messages.append(reply)
        output = self.counter.count_message(reply)
        self.context_tokens = tokens + output
        self.budget.record_usage(Usage(input_tokens=tokens, output_tokens=output), [*view, reply])

    def _view(self) -> tuple[list[Message], list[str], int]:
        """The agent view as sent, what repairing it took, and the tokens masking saved."""
        visible = [m for m in self.messages if m.metadata.agent_visible]
        shown = apply_masking(visible, cache=self.cache)
        masked = 0
        if any(m.metadata.masked for m in visible):
            masked = self.counter.count_messages(visible) - self.counter.count_messages(shown)
        view, issues = fix_agent_view(shown)
        return view, issues, masked

    def _turn_context(self) -> str | None:
        return format_turn_context(
            TurnContext(
                now=REPLAY_NOW,
                working_dir=STAND_IN_WORKING_DIR,
                context_tokens=self.context_tokens or None,
                context_limit=self.options.context_limit,
                threshold=self.options.threshold,
                turns_taken=self.turn_calls,
                max_turns=REPLAY_MAX_TURNS,
            )
        )

    async def _compact(self, *, overflow: bool) -> bool:
        try:
            result = await compact_messages(self.provider, self.messages, counter=self.counter)
        except ProviderError as exc:
            self._fail(exc)
            return False
        self.messages = list(result.messages)
        self.budget.compacted(result)
        self.context_tokens = result.retained_tokens + self.budget.overhead_tokens
        self.compactions += 1
        self.overflow_compactions += overflow
        self.events.append("overflow_compaction" if overflow else "compaction")
        self._side(result.usage, result.summary.requests)
        return True

    def _side(self, usage: Usage, calls: int) -> None:
        self.side_calls += calls
        self.side_input_tokens += usage.input_tokens or 0

    def _fail(self, exc: Exception) -> None:
        self.events.append("failed")
        self.failures.append(f"call {len(self.calls) + 1}: {exc}")


async def replay_messages(
    messages: Sequence[Message],
    strategy: ReplayStrategy,
    *,
    summarizer: Provider | None = None,
    options: ReplayOptions | None = None,
    system_prompt: str = "",
    counter: TokenCounter | None = None,
) -> StrategyReplay:
    """Replay prepared `messages` (see `prepare_messages`) under one strategy.

    `summarizer` answers compaction and tool-pair requests (default: `StubSummarizer`)."""
    if strategy not in REPLAY_STRATEGIES:
        raise ReplayError(
            f"unknown strategy {strategy!r}; choose one of: {', '.join(REPLAY_STRATEGIES)}"
        )
    options = options or ReplayOptions()
    if counter is None:
        from context_mgmt.tokens import default_counter

        counter = default_counter()
    if summarizer is None:
        from context_mgmt.replay_summarizer import StubSummarizer

        summarizer = StubSummarizer(context_limit=options.context_limit, counter=counter)
    replay = _Replay(strategy, summarizer, options, system_prompt, counter)
    return await replay.run(messages)


async def replay_transcript(
    transcript: ImportedTranscript,
    strategies: Sequence[ReplayStrategy] = REPLAY_STRATEGIES,
    *,
    summarizer: Provider | None = None,
    options: ReplayOptions | None = None,
    run: int = 1,
    runs: int = 1,
    counter: TokenCounter | None = None,
) -> TranscriptReplay:
    """Replay one imported transcript under each of `strategies`, from scratch each time."""
    options = options or ReplayOptions()
    if counter is None:
        from context_mgmt.tokens import default_counter

        counter = default_counter()
    prepared, repairs = prepare_messages(transcript.messages)
    model_calls = sum(1 for m in prepared if m.role == "assistant" and m.metadata.agent_visible)
    if model_calls == 0:
        raise ReplayError(f"{transcript.source or 'the transcript'} holds no model calls to replay")
    source: SystemPromptSource
    if options.system_prompt is not None:
        system, source = options.system_prompt, "option"
    elif transcript.system_prompt:
        system, source = transcript.system_prompt, "transcript"
    else:
        system, source = stand_in_system_prompt(), "stand-in"
    results = {
        strategy: await replay_messages(
            prepared,
            strategy,
            summarizer=summarizer,
            options=options,
            system_prompt=system,
            counter=counter,
        )
        for strategy in dict.fromkeys(strategies)
    }
    return TranscriptReplay(
        source=transcript.source,
        source_format=transcript.source_format,
        run=run,
        runs=runs,
        title=transcript.title,
        messages=len(transcript.messages),
        model_calls=model_calls,
        tool_calls=transcript.stats.tool_calls,
        source_repairs=tuple(repairs),
        system_prompt=source,
        system_tokens=counter.count_text(system),
        options=options,
        results=results,
    )


async def replay_file(
    path: Path | str,
    strategies: Sequence[ReplayStrategy] = REPLAY_STRATEGIES,
    *,
    run: int | None = None,
    summarizer: Provider | None = None,
    options: ReplayOptions | None = None,
    counter: TokenCounter | None = None,
) -> list[TranscriptReplay]:
    """Replay every run in the file at `path` (or only run `run`, 1-based).

    Raises `sessions.ImportFailed` for a file that is no transcript, `ReplayError` for a run
    that does not exist or holds no model calls."""
    from sessions.importers import load_transcripts

    transcripts = load_transcripts(path)
    runs = len(transcripts)
    if run is not None and not 1 <= run <= runs:
        plural = "run" if runs == 1 else "runs"
        raise ReplayError(f"{path} holds {runs} {plural}; --run must be between 1 and {runs}")
    chosen = [run] if run is not None else range(1, runs + 1)
    return [
        await replay_transcript(
            transcripts[n - 1],
            strategies,
            summarizer=summarizer,
            options=options,
            run=n,
            runs=runs,
            counter=counter,
        )
        for n in chosen
    ]
