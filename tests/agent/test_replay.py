"""`agent.replay`: a recorded run replayed through the reply loop under each strategy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gosling.agent.events import Notice
from gosling.agent.replay.results import (
    REPLAY_STRATEGIES,
    ReplayOptions,
    StrategyReplay,
    TranscriptReplay,
)
from gosling.agent.replay.run import (
    ReplayError,
    prepare_messages,
    replay_file,
    replay_messages,
    replay_transcript,
)
from gosling.agent.replay.stub_summarizer import StubSummarizer
from gosling.context_mgmt.pair_summarizer import TOOL_PAIR_REQUEST
from gosling.context_mgmt.summarize import SUMMARY_REQUEST, render_compaction_prompt
from gosling.context_mgmt.tokens import default_counter
from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse
from gosling.prompts import render
from gosling.providers.prompt_cache import CacheFamily
from gosling.sessions.importers import ImportedTranscript, parse_transcripts
from tests.agent.replay_transcripts import FOLLOW_UP, TASK, chat_run, write_run


def transcript(turns: tuple[int, ...], empty_result_at: int = -1) -> ImportedTranscript:
    run = chat_run(turns=turns, empty_result_at=empty_result_at)
    return parse_transcripts(json.dumps(run), source="run.json")[0]


async def replay(
    turns: tuple[int, ...],
    limit: int = 128_000,
    empty_result_at: int = -1,
    cache: CacheFamily = "anthropic",
) -> TranscriptReplay:
    return await replay_transcript(
        transcript(turns, empty_result_at),
        options=ReplayOptions(context_limit=limit, cache_family=cache),
    )


def tokens(result: StrategyReplay) -> list[int]:
    return [c.tokens for c in result.calls]


# -- per strategy ---------------------------------------------------------------------------


async def test_every_assistant_message_is_one_model_call_and_none_sends_everything() -> None:
    result = await replay(turns=(30,))
    none = result.results["none"]
    assert result.model_calls == 31 == len(none.calls)
    sent = tokens(none)
    assert sent == sorted(sent) and len(set(sent)) == len(sent)  # the history only grows
    assert none.tokens_sent == sum(sent)
    assert none.peak_context == sent[-1]
    assert (none.compactions, none.pair_summaries, none.masked_results) == (0, 0, 0)
    assert none.tokens_masked == 0 and none.all_valid


def first_masked(result: StrategyReplay) -> int:
    return next(c.call for c in result.calls if "masked" in c.labels)


async def test_without_a_cache_masking_starts_as_soon_as_a_result_is_older_than_keep_last() -> None:
    result = await replay(turns=(30,), cache="none")
    none, mask, hybrid = (result.results[s] for s in ("none", "mask", "hybrid"))
    # Every token is paid on every call: call 12 is the first to carry 11 results, and the
    # oldest is masked right then.
    assert first_masked(mask) == 12
    assert tokens(mask)[:11] == tokens(none)[:11]
    assert mask.calls[11].tokens < none.calls[11].tokens
    # Far below the threshold, hybrid is masking alone.
    assert tokens(hybrid) == tokens(mask) and hybrid.compactions == 0
    assert result.relative("mask") == pytest.approx(mask.tokens_sent / none.tokens_sent)


@pytest.mark.parametrize("cache", ["anthropic", "openai", "local"])
async def test_with_a_cache_masking_waits_until_it_pays_and_costs_less_than_none(
    cache: CacheFamily,
) -> None:
    # A local server bills nothing, but re-reading a changed prefix costs it prefill time.
    result = await replay(turns=(60,), cache=cache)
    none, mask = result.results["none"], result.results["mask"]
    first = first_masked(mask)
    # Masking re-sends what follows the first placeholder once at the cache-write price, so
    # it waits for old output to pile up instead of masking on every call.
    assert 12 < first < 61
    assert tokens(mask)[: first - 1] == tokens(none)[: first - 1]
    # The call after the change reads less of its prompt from the cache than `none` does.
    assert mask.calls[first - 1].cache_read < none.calls[first - 1].cache_read
    assert mask.cost < none.cost
    # What the first trim saved is what `none` sent more on that call (give or take the
    # per-turn context line, which shows each strategy's own context size).
    call = mask.calls[first - 1]
    assert abs(none.calls[first - 1].tokens - call.tokens - call.masked_tokens) <= 4


async def test_summarize_never_touches_the_current_turns_calls() -> None:
    result = await replay(turns=(30,))
    summarize = result.results["summarize"]
    assert summarize.pair_summaries == 0 and summarize.side_calls == 0
    assert tokens(summarize) == tokens(result.results["none"])


async def test_summarize_replaces_old_pairs_by_notes_in_a_later_turn() -> None:
    # Without a cache to pay for a change: goose's rule, one batch of the oldest 10.
    result = await replay(turns=(30, 5), cache="none")
    none, summarize = result.results["none"], result.results["summarize"]
    assert summarize.pair_summaries == 10  # one batch: 30 old calls > cutoff 15 + batch 10
    assert summarize.side_calls == 10 and summarize.side_input_tokens > 0
    applied = [c for c in summarize.calls if "summarized" in c.labels]
    assert len(applied) == 1 and applied[0].call > 31  # in the second turn
    assert applied[0].tokens < none.calls[applied[0].call - 1].tokens
    assert summarize.all_valid


async def test_with_a_cache_no_summary_is_asked_for_when_hiding_the_pairs_cannot_pay() -> None:
    result = await replay(turns=(30, 5))
    none, summarize = result.results["none"], result.results["summarize"]
    # Goose's rule would summarize 10 pairs here (the test above, without a cache). Under
    # Anthropic's cache each summary call is paid as new input and hiding the pairs re-sends
    # the conversation, which five more calls of reading cheaper cannot pay back.
    assert summarize.side_calls == 0 and summarize.pair_summaries == 0
    assert summarize.cost == none.cost


async def test_a_small_window_compacts_and_every_view_stays_valid() -> None:
    result = await replay(limit=6_000, turns=(30, 5))
    summarize, mask, hybrid = (result.results[s] for s in ("summarize", "mask", "hybrid"))
    for strategy in (summarize, hybrid):
        assert strategy.compactions >= 1 and strategy.overflow_compactions == 0
        assert max(tokens(strategy)) <= 6_000
    # mask compacts only when a request would not fit.
    assert mask.compactions >= 1 and mask.compactions == mask.overflow_compactions
    first = next(c for c in mask.calls if "overflow compaction" in c.labels)
    assert isinstance(first.events[0], Notice) and "did not fit" in first.events[0].text
    assert not first.overflow and first.tokens <= 6_000
    for strategy in (summarize, mask, hybrid):
        assert strategy.overflows == 0
        assert strategy.all_valid, [c.issues for c in strategy.calls if c.issues]
        assert strategy.tokens_sent < result.results["none"].tokens_sent


async def test_none_records_every_request_over_the_window_as_an_overflow() -> None:
    result = await replay(limit=6_000, turns=(30,))
    none = result.results["none"]
    over = [c for c in none.calls if c.tokens > 6_000]
    assert over and len(over) < len(none.calls)
    assert none.overflows == len(over)
    assert all(c.overflow and c.labels == ("overflow",) for c in over)
    assert none.compactions == 0 and none.all_valid


# -- validity -------------------------------------------------------------------------------


async def test_source_defects_are_repaired_once_and_reported_apart() -> None:
    result = await replay(turns=(12,), empty_result_at=3)
    assert any("empty tool result 'call_3'" in r for r in result.source_repairs)
    assert all(r.all_valid for r in result.results.values())


async def test_a_view_the_pipeline_would_have_to_repair_is_flagged_invalid() -> None:
    messages = list(transcript((6,), empty_result_at=2).messages)  # not prepared
    result = await replay_messages(messages, "none")
    bad = [c for c in result.calls if not c.valid]
    assert bad and not result.all_valid
    assert bad[0].call == 4  # the first view holding the empty result
    assert any("call_2" in issue for issue in bad[0].issues)
    prepared, repairs = prepare_messages(messages)
    assert repairs and (await replay_messages(prepared, "none")).all_valid


# -- the stub summarizer --------------------------------------------------------------------


async def test_replays_are_deterministic() -> None:
    first = await replay(limit=6_000, turns=(30, 5))
    second = await replay(limit=6_000, turns=(30, 5))
    assert first.to_dict() == second.to_dict()


def _history() -> list[Message]:
    edit = ToolRequest(id="e1", name="edit", arguments={"path": "src/dates.py", "new": "x"})
    run = ToolRequest(id="r1", name="bash", arguments={"command": "pytest tests/test_dates.py"})
    failure = "E   ValueError: month must be in 1..12\nsecond line of the traceback"
    return [
        Message.user(TASK),
        Message.assistant("Editing the parser.", edit),
        Message.user(None, ToolResponse(id="e1", content=(TextContent(text="ok"),))),
        Message.assistant("Running the tests.", run),
        Message.user(
            None, ToolResponse(id="r1", content=(TextContent(text=failure),), is_error=True)
        ),
        Message.assistant("The month check is off by one; fixing it next."),
        Message.user(FOLLOW_UP),
    ]


def test_the_stub_summary_is_built_from_the_transcript_and_capped() -> None:
    system = render_compaction_prompt(
        _history(), read_files=["README.md"], modified_files=["src/dates.py"]
    )
    stub = StubSummarizer(summary_tokens=2_000)
    ask = [Message.user(SUMMARY_REQUEST)]
    document = stub.summary_document(system)
    assert document["user_intent"] == [TASK]
    assert document["user_messages"] == [TASK, FOLLOW_UP]
    paths = [f["path"] for f in document["files"]]
    assert paths[:2] == ["src/dates.py", "README.md"] and "tests/test_dates.py" in paths
    assert document["errors_and_fixes"] == ["E ValueError: month must be in 1..12"]
    assert document["current_work"] == "The month check is off by one; fixing it next."
    assert stub.reply_text(system, ask) == stub.reply_text(system, ask)

    tiny = StubSummarizer(summary_tokens=40)
    capped = tiny.summary_document(system)
    assert default_counter().count_text(json.dumps(capped)) <= 40
    assert capped["user_intent"] == [TASK]  # the intent is the last thing to go


def test_the_stub_pair_note_names_the_call_and_quotes_the_first_error_line() -> None:
    call = "\n".join(
        [
            "[assistant]: Running the tests.",
            'tool_request(bash): {"command": "pytest tests/test_dates.py"}',
            "[user]: tool_response: [error] E   ValueError: month must be in 1..12",
            "second line of the traceback",
        ]
    )
    system = render("tool_pair_summary.md", tool_name="bash", call=call)
    stub = StubSummarizer(note_tokens=80)
    note = stub.reply_text(system, [Message.user(TOOL_PAIR_REQUEST)])
    assert note.startswith('Called bash with {"command": "pytest tests/test_dates.py"}.')
    assert "It failed: E ValueError: month must be in 1..12" in note
    assert default_counter().count_text(note) <= 80


async def test_the_stub_overflows_like_a_model_with_a_window() -> None:
    stub = StubSummarizer(context_limit=50)
    from gosling.providers import ContextLengthExceeded

    with pytest.raises(ContextLengthExceeded):
        await stub.complete("x " * 200, [Message.user(SUMMARY_REQUEST)])


# -- files and runs -------------------------------------------------------------------------


async def test_a_file_with_several_runs_replays_each_or_the_one_asked_for(tmp_path: Path) -> None:
    path = write_run(tmp_path / "runs.jsonl", runs=3, turns=(4,))
    every = await replay_file(path, ("none",))
    assert [r.run for r in every] == [1, 2, 3] and every[1].name == "runs.jsonl#2"
    only = await replay_file(path, ("none", "mask"), run=2)
    assert [r.run for r in only] == [2] and list(only[0].results) == ["none", "mask"]
    with pytest.raises(ReplayError, match="holds 3 runs; --run must be between 1 and 3"):
        await replay_file(path, run=4)


async def test_a_transcript_without_model_calls_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user", "content": "hello"}]), encoding="utf-8")
    with pytest.raises(ReplayError, match="no model calls"):
        await replay_file(path)


async def test_a_transcript_without_a_system_prompt_gets_the_stand_in() -> None:
    plain = transcript((2,))
    bare = ImportedTranscript(
        source_format=plain.source_format, messages=plain.messages, stats=plain.stats
    )
    result = await replay_transcript(bare, ("none",))
    assert result.system_prompt == "stand-in" and result.system_tokens > 0
    assert (await replay_transcript(plain, ("none",))).system_prompt == "transcript"
    assert list(REPLAY_STRATEGIES) == ["none", "summarize", "mask", "hybrid"]


# -- cost and what a strategy hid -------------------------------------------------------------


async def test_replay_prices_every_call_and_counts_what_masking_hid_that_was_used() -> None:
    run = chat_run(turns=(60,))
    # The closing answer names something only output 0 (masked by then) and output 59 (the
    # newest, still whole) contain.
    run[-1]["content"] = "Done: handler_0 and handler_59 were the culprits."
    [source] = parse_transcripts(json.dumps(run), source="run.json")
    result = await replay_transcript(source, options=ReplayOptions(context_limit=128_000))
    none, mask, hybrid = (result.results[s] for s in ("none", "mask", "hybrid"))
    assert none.later_uses == mask.later_uses == 2
    assert none.hidden_then_used == 0
    # Output 0 is masked by then, but its placeholder keeps `handler_0` among its keys
    # (`context_mgmt.placeholder_keys`), so the answer did not need the hidden output.
    assert mask.hidden_then_used == hybrid.hidden_then_used == 0
    # Priced with Anthropic's cache: whole history, so nearly all of it is read back
    assert none.cached_share > 0.8
    assert none.cost == pytest.approx(sum(c.cost for c in none.calls))
    # Masking changes an early message, so the call after it re-sends the rest at the
    # cache-write price: it reads less from the cache than the same call under `none`.
    first_masked = next(i for i, c in enumerate(mask.calls) if "masked" in c.labels)
    assert mask.calls[first_masked].cache_read < none.calls[first_masked].cache_read
    assert mask.calls[first_masked].cache_read < mask.calls[first_masked - 1].cache_read
    data = result.to_dict(calls=True)["strategies"]["mask"]
    assert data["hidden_then_used"] == 0 and data["cost"] == round(mask.cost)
    assert data["cost_relative_to_none"] == pytest.approx(mask.cost / none.cost, abs=1e-4)


async def test_a_long_session_folds_old_placeholders_and_its_requests_stop_growing() -> None:
    result = await replay(turns=(160,), cache="anthropic")
    none, hybrid = result.results["none"], result.results["hybrid"]
    assert "folded" in {label for c in hybrid.calls for label in c.labels}
    sent = tokens(hybrid)
    # A placeholder per masked call would grow every request; folded, the size settles:
    # the largest request of calls 121-160 is no larger than that of calls 81-120.
    assert max(sent[120:160]) <= 1.02 * max(sent[80:120])
    assert max(tokens(none)[120:160]) > 1.25 * max(tokens(none)[80:120])
    assert hybrid.all_valid and hybrid.cost < none.cost


async def test_with_anthropics_cache_a_trim_re_sends_only_what_follows_the_cache_anchor() -> None:
    # 80 calls of small output (never worth trimming), then 80 of 3,000 characters; the last
    # 10 calls stay whole, so every trim changes the prompt more than 20 blocks back, where
    # Anthropic finds no cached prefix from the last breakpoints.
    run = chat_run(turns=(160,), sizes=[300] * 80 + [3_000] * 80)
    [source] = parse_transcripts(json.dumps(run), source="run.json")
    options = ReplayOptions(keep_tokens=40_000)
    result = await replay_transcript(source, ("none", "hybrid"), options=options)
    none, hybrid = result.results["none"], result.results["hybrid"]
    trims = [c for c in hybrid.calls if "masked" in c.labels]
    assert len(trims) >= 2
    # The anchor before the trimmed part was written by earlier requests: each trim reads
    # the 80 small calls back from the cache and re-sends only what follows them.
    settled = none.calls[80].tokens - none.calls[0].tokens
    for trim in trims:
        assert settled * 0.9 <= trim.cache_read < trim.tokens
    assert hybrid.cost < none.cost
