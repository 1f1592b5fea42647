"""Replay a recorded session through the real reply loop, offline.

A transcript (any format `sessions.importers` reads) is turned into the user's turns: each
user message is sent with `Agent.reply`, and the loop runs exactly as it runs live, with the
session's own `ContextPipeline` deciding masking, tool-pair summaries, the threshold check,
compaction and overflow compaction. Only the I/O is recorded (`agent.replay.recorded`): the
model answers each call with the transcript's next assistant message (and rejects a request
over the window with the real `ContextLengthExceeded`), and the tools answer each call with
the transcript's result for that call id. Per call the replay reports what the provider was
sent (`count_chat` of the system prompt, the messages and the per-turn context), what it
costs with prompt caching (`providers.cache_cost`, the family of `ReplayOptions.cache_family`)
and the loop's own events before it; per strategy, the totals and the hidden-then-used count
(`context_mgmt.later_use`: a reply used something first seen in a tool output its call's view
did not show whole).

Strategies are config `context_strategy` (`summarize`, `mask`, `hybrid`) plus `none`, a
model that manages its own context: gosling neither masks, summarizes nor compacts, and a
request over the window is sent anyway and marked as over.

Where a replay differs from a live run, on purpose: the replies are the recorded ones (a
model that saw a compacted context might have answered differently); tools offer no schemas
(a transcript does not record them); a summary batch runs while the loop waits for tools, as
it would live, but the recorded tools answer at once. A user message that follows tool
results (the user spoke while the agent worked) is replayed as gosling would see it: the
turn is cancelled right before its next model call, then the message starts a new turn; the
end of a run that stops after tool results is the same cancelled call. Source defects (empty
tool results, unanswered calls, adjacent user messages) are repaired once up front, the way
a live session would have stored them, and listed in `source_repairs`; after that, a view
`fix_conversation` has to repair is the pipeline's fault and marks the call invalid.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gosling.agent.agent import Agent
from gosling.agent.config import Settings
from gosling.agent.events import (
    CompactionFinished,
    ContextTrimmed,
    ErrorEvent,
    Event,
    Notice,
)
from gosling.agent.replay.recorded import RecordedProvider, RecordedTools
from gosling.agent.replay.results import (
    REPLAY_STRATEGIES,
    ReplayCall,
    ReplayOptions,
    ReplayStrategy,
    StrategyReplay,
    SystemPromptSource,
    TranscriptReplay,
)
from gosling.agent.session import AgentSession
from gosling.agent.system_prompt import RequestPrefix
from gosling.context_mgmt.later_use import (
    LaterUse,
    count_hidden_uses,
    find_later_uses,
    hidden_tool_outputs,
    kept_tokens,
    tool_outputs,
)
from gosling.context_mgmt.request_segments import RequestSegmenter
from gosling.conversation import Message, ToolRequest, ToolResponse, fix_conversation
from gosling.providers import Provider
from gosling.providers.cache_cost import CacheSimulator
from gosling.providers.prompt_cache import FAMILY_CACHES

if TYPE_CHECKING:
    from gosling.context_mgmt.tokens import TokenCounter
    from gosling.sessions.importers import ImportedTranscript

REPLAY_NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
"""The time the per-turn context shows, fixed so replays are byte-for-byte repeatable."""
STAND_IN_WORKING_DIR = "/workspace"
CONTEXT_EVENTS = (ContextTrimmed, CompactionFinished, Notice, ErrorEvent)


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


def stand_in_system_prompt() -> str:
    """gosling's own system prompt with fixed inputs, for transcripts that carry none."""
    from gosling.prompts import render

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


@dataclass
class _Turn:
    """What the user said, and what the recording holds for the loop's calls after it."""

    user: Message | None
    history: list[Message] = field(default_factory=list)
    """Messages before the user's (invisible ones, or a run's opening): stored as they are."""
    replies: list[Message] = field(default_factory=list)
    results: dict[str, ToolResponse] = field(default_factory=dict)


def _is_results(message: Message) -> bool:
    return message.role == "user" and bool(message.tool_responses)


def _turns(messages: Sequence[Message]) -> list[_Turn]:
    """Each agent-visible user message that is not tool results starts a turn."""
    turns = [_Turn(user=None)]
    for message in messages:
        turn = turns[-1]
        if not message.metadata.agent_visible:
            turn.history.append(message)
        elif message.role == "assistant":
            (turn.replies if turn.user is not None else turn.history).append(message)
        elif _is_results(message) and turn.user is not None:
            turn.results.update((r.id, r) for r in message.tool_responses)
        elif turn.user is None:
            turn.user = message
        else:
            turns.append(_Turn(user=message))
    return turns


async def _approve(request: ToolRequest, reason: str) -> bool:
    """The user of a recording approved everything it ran."""
    return True


# -- one strategy -----------------------------------------------------------------------------


class _StrategyRun:
    """One strategy's replay: a fresh agent and session, driven turn by turn."""

    def __init__(
        self,
        strategy: ReplayStrategy,
        summarizer: Provider,
        options: ReplayOptions,
        system_prompt: str,
        counter: TokenCounter,
    ) -> None:
        self.strategy = strategy
        self.counter = counter
        self.provider = RecordedProvider(
            summarizer,
            context_limit=options.context_limit,
            counter=counter,
            manages_own_context=strategy == "none",
            on_call=self._called,
        )
        self.tools = RecordedTools()
        settings = Settings(
            context_strategy="summarize" if strategy == "none" else strategy,
            tool_pair_summarization=strategy != "none",
            auto_compact_threshold=options.threshold,
            mask_keep_last=options.keep_last,
            mask_keep_tokens=options.keep_tokens,
            trim_patience=options.patience,
            prompt_cache=options.cache_family,
            tool_call_cutoff=options.cutoff,
            context_file_names=[],
            # The stub summarizer reads the transcript form's prompt, and the replay prices
            # summary calls as new input: the prefix form is priced in `bench compaction`.
            compaction_form="transcript",
        )
        self.agent = Agent(
            self.provider,
            tools=self.tools,
            config=settings,
            working_dir=Path(STAND_IN_WORKING_DIR),
            approver=_approve,
            counter=counter,
            clock=lambda: REPLAY_NOW,
        )
        self.session: AgentSession = self.agent.open_session()
        self.session.prefix = RequestPrefix(system_prompt, (), "")
        self.calls: list[ReplayCall] = []
        self.pending: list[Event] = []
        self.failures: list[str] = []
        self._repairs_seen = 0
        cache = FAMILY_CACHES[options.cache_family]
        self.segmenter = RequestSegmenter(counter, cache.mechanism)
        self.cache = CacheSimulator(cache)
        self.hidden_at: dict[int, frozenset[str]] = {}
        """Per recorded reply (by `id`): the tool outputs its call's view did not show whole."""
        self.kept_at: dict[int, dict[str, frozenset[str]]] = {}
        """Per recorded reply: the distinctive tokens those outputs' placeholders still showed."""

    def _called(
        self, system: str, messages: Sequence[Message], tokens: int, over: bool, reply: Message
    ) -> None:
        repairs = self.session.view.repairs
        issues, self._repairs_seen = repairs[self._repairs_seen :], len(repairs)
        output = self.counter.count_message(reply)
        priced = self.cache.price(self.segmenter.request(system, messages, output_tokens=output))
        outputs = tool_outputs(self.session.messages)
        hidden = hidden_tool_outputs(messages, outputs)
        self.hidden_at[id(reply)] = hidden
        self.kept_at[id(reply)] = kept_tokens(messages, hidden)
        self.calls.append(
            ReplayCall(
                call=len(self.calls) + 1,
                tokens=tokens,
                messages=len(messages),
                masked_tokens=self._masked_tokens(messages),
                events=tuple(self.pending),
                overflow=over,
                issues=tuple(issues),
                cache_read=priced.cache_read,
                cache_write=priced.cache_write,
                cost=priced.cost,
            )
        )
        self.pending = []

    def _masked_tokens(self, sent: Sequence[Message]) -> int:
        """Tokens masking saved in this request: originals minus what was shown."""
        saved = 0
        for shown in sent:
            original = self.session.get(shown.id)
            if original is not None and original.metadata.masked:
                count = self.counter.count_message
                saved += count(original) - count(shown)
        return saved

    async def run(
        self, turns: Sequence[_Turn], uses: Sequence[LaterUse], index_of: Mapping[int, int]
    ) -> StrategyReplay:
        """Replay `turns`. `uses` index the replayed messages (`index_of` maps a message's
        `id` to its index); a use counts as hidden when its output was hidden from the call
        that got the using reply."""
        try:
            for turn in turns:
                if turn.history:
                    self.session.append(*turn.history)
                if turn.user is None:
                    continue
                self.provider.replies.extend(turn.replies)
                self.tools.results = turn.results
                await asyncio.create_task(self._turn(turn.user))
                self.provider.replies.clear()
        finally:
            await self.session.close()
        events = [e for c in self.calls for e in c.events]
        compactions = [e for e in events if isinstance(e, CompactionFinished)]
        hidden_at = {
            index: hidden
            for reply, hidden in self.hidden_at.items()
            if (index := index_of.get(reply)) is not None
        }
        kept_at = {
            index: kept
            for reply, kept in self.kept_at.items()
            if (index := index_of.get(reply)) is not None
        }
        counted = count_hidden_uses(uses, hidden_at, kept_at)
        return StrategyReplay(
            strategy=self.strategy,
            calls=tuple(self.calls),
            compactions=len(compactions),
            overflow_compactions=sum(e.trigger == "overflow" for e in compactions),
            receipts=tuple(
                {"trigger": e.trigger, "line": e.receipt_line, **(e.receipt or {})}
                for e in compactions
            ),
            pair_summaries=sum(
                len(e.tool_ids)
                for e in events
                if isinstance(e, ContextTrimmed) and e.strategy == "summarize"
            ),
            masked_results=sum(
                1 for m in self.session.messages if m.metadata.masked and m.tool_responses
            ),
            side_calls=self.provider.side_calls,
            side_input_tokens=self.provider.side_input_tokens,
            side_cost=self.provider.side_input_tokens
            + self.provider.side_output_tokens * self.cache.cache.output,
            failures=tuple(self.failures),
            later_uses=counted.uses,
            hidden_then_used=counted.hidden,
        )

    async def _turn(self, user: Message) -> None:
        async for event in self.agent.reply(self.session, user):
            if isinstance(event, CONTEXT_EVENTS):
                self.pending.append(event)
            if isinstance(event, ErrorEvent):
                self.failures.append(f"call {len(self.calls) + 1}: {event.message}")


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
        from gosling.context_mgmt.tokens import default_counter

        counter = default_counter()
    if summarizer is None:
        from gosling.agent.replay.stub_summarizer import StubSummarizer

        summarizer = StubSummarizer(context_limit=options.context_limit, counter=counter)
    run = _StrategyRun(strategy, summarizer, options, system_prompt, counter)
    uses = find_later_uses(messages, system_prompt)
    return await run.run(_turns(messages), uses, {id(m): i for i, m in enumerate(messages)})


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
        from gosling.context_mgmt.tokens import default_counter

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
    from gosling.sessions.importers import load_transcripts

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
