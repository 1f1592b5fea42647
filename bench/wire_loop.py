"""The cost loop through a real `gosling run`, priced from the wire (issue 30).

`run_loop(steps, family)` writes the loop's outputs (`bench.cost_loop.shell_output`, 8 KB
a step) into a throwaway workspace and runs `gosling run` as a subprocess (its real CLI, the
real Anthropic or OpenAI SDK, the developer extension's shell running `cat out/NNNN.txt`)
against the loopback fake server, with `GOSLING_HOME` in the same temporary directory. The
server (`LoopReplies`) answers each request from what it carries:

- a summary gosling asks for (a request with another system prompt or tools, or ending with
  gosling's compaction request) gets a summary of about 2,000 tokens; every other request
  is the loop's next call and gets the next step's tool call (after the last step, the final
  answer): gosling sends one call per tool result, whatever it trimmed or compacted before;
- the usage reported is what a provider would report for that body: its o200k text tokens
  (`bench.wire_requests.body_request`) split by a `providers.cache_cost.CacheSimulator` of
  the family's cache, fed every request in order, into new input, cache reads and cache
  writes; output tokens are the reply's text, tool name and arguments. gosling's context
  pipeline takes the reported count as the context's size, as it would in a real session.

It keeps every request as the cost model sees it (`LoopRun.requests`), the loop before any
trimming in the wire's shape (`LoopRun.history`, for the baselines of `bench.cost_loop`) and,
counted separately from the whole bodies, the text tokens the wire carried.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.bench_speed import REPO, TimedRun, Tree, _gosling, _workspace, timed_run
from bench.cost_loop import (
    FINAL_ANSWER,
    TASK,
    TOOL_NAME,
    WINDOW,
    WireHistory,
    call_id,
    shell_output,
    summary_text,
)
from bench.wire_requests import (
    Api,
    Body,
    Count,
    asks_for_compaction,
    body_request,
    call_and_result,
    conversation,
    head_segment,
    text_tokens,
)
from gosling.providers.cache_cost import CacheSimulator, Request, RequestCost
from gosling.providers.prompt_cache import CacheFamily, PromptCache, prompt_cache_for
from tests.fakes import FakeLLMServer, FakeToolCall, FakeUsage, RecordedRequest, Turn

FAMILIES: dict[CacheFamily, tuple[str, str]] = {
    "anthropic": ("anthropic", "claude-sonnet-4-5"),
    "openai": ("openai", "gpt-5"),
}
"""Family -> the `--provider` and `--model` of the run (and the model priced)."""


def output_file(step: int) -> str:
    return f"out/{step:04d}.txt"


def step_turn(step: int, steps: int) -> Turn:
    """The model's reply to the call of `step`: a shell command, or the final answer."""
    if step >= steps:
        return Turn(text=FINAL_ANSWER)
    call = FakeToolCall(TOOL_NAME, {"command": f"cat {output_file(step)}"}, id=call_id(step))
    return Turn(text=f"Step {step}: checking the output.", tool_calls=[call])


def reply_tokens(turn: Turn, count: Count) -> int:
    """What the model wrote: its text, and each tool call's name and arguments."""
    calls = sum(count(c.name) + count(c.arguments_json()) for c in turn.tool_calls)
    return count(turn.text) + calls


def reported_usage(cost: RequestCost) -> FakeUsage:
    """The usage a provider reports for a priced request (Anthropic's split; the OpenAI
    renderings add the cached part back into the prompt tokens)."""
    return FakeUsage(
        input_tokens=cost.uncached,
        output_tokens=cost.output,
        cache_read_tokens=cost.cache_read,
        cache_write_tokens=cost.cache_write,
    )


class LoopReplies:
    """The fake server's side of the loop: picks each reply, reports its usage, and keeps
    what the wire carried."""

    def __init__(self, steps: int, cache: PromptCache, count: Count) -> None:
        self.steps = steps
        self.count = count
        self.simulator = CacheSimulator(cache)
        self.requests: list[Request] = []
        self.reported: list[FakeUsage] = []
        self.wire_text_tokens = 0
        self.wire_bytes = 0
        self.summaries = 0
        self.history: WireHistory | None = None
        self.most_requests = 4 * (steps + 1) + 20
        """More than this and the run is looping (every step compacting, say): refused."""
        self._lock = threading.Lock()

    def reply(self, recorded: RecordedRequest) -> Turn:
        if recorded.api not in ("anthropic", "chat") or not isinstance(recorded.body, dict):
            raise ValueError(f"the cost loop speaks Anthropic and Chat, not {recorded.api}")
        api: Api = "anthropic" if recorded.api == "anthropic" else "chat"
        body = recorded.body
        with self._lock:
            if len(self.requests) >= self.most_requests:
                raise RuntimeError(f"{len(self.requests)} requests for {self.steps} steps")
            step = self._step_of(body, api)
            turn = self._turn(step)
            request = body_request(body, api, self.count, reply_tokens(turn, self.count))
            usage = reported_usage(self.simulator.price(request))
            self.requests.append(request)
            self.reported.append(usage)
            self.wire_text_tokens += text_tokens(body, self.count)
            self.wire_bytes += recorded.size
            self._note(body, api, step, request.output_tokens)
        return replace(turn, usage=usage)

    def _step_of(self, body: Body, api: Api) -> int | None:
        """Which step's reply `body` asks for: the one after the last step answered (gosling
        sends one loop call per tool result); None for a summary (another system prompt or
        tools, or the compaction request last)."""
        if self.history is None:
            return 0
        if head_segment(body, api, self.count).key != self.history.head.key:
            return None
        if asks_for_compaction(body):
            return None
        return len(self.history.replies)

    def _turn(self, step: int | None) -> Turn:
        if step is not None:
            return step_turn(step, self.steps)
        self.summaries += 1
        return Turn(text=summary_text(self.summaries))

    def _note(self, body: Body, api: Api, step: int | None, output: int) -> None:
        """Keep the loop as first sent (the baselines' history): the task from the first
        request, each call with its result from the first request that carries them (a
        summary request may be the first), and each step's reply."""
        if self.history is None:
            messages = conversation(body, api)
            lead = [m for m in messages if m.get("role") == "system"]
            task = [m for m in messages if m.get("role") != "system"]
            self.history = WireHistory(api, head_segment(body, api, self.count), lead, task)
        history = self.history
        while len(history.steps) < len(history.replies):
            pair = call_and_result(body, api, call_id(len(history.steps)))
            if pair is None:
                break
            history.steps.append(pair)
        if step is not None:
            history.replies.append(output)


@dataclass(frozen=True)
class LoopRun:
    """One real run of the loop: what it sent and what the fake server reported."""

    family: CacheFamily
    model: str
    requests: list[Request]
    history: WireHistory
    reported: list[FakeUsage]
    wire_text_tokens: int
    """o200k tokens of the texts of every body, counted whole (not from the segments)."""
    wire_bytes: int
    summaries: int
    served: int
    """Model requests the fake server received."""
    timed: TimedRun

    @property
    def reported_input_tokens(self) -> int:
        return sum(
            (u.input_tokens or 0) + u.cache_read_tokens + u.cache_write_tokens
            for u in self.reported
        )


def _write_outputs(work: Path, steps: int) -> None:
    (work / "out").mkdir()
    for step in range(steps):
        (work / output_file(step)).write_text(shell_output(step))


def run_loop(
    steps: int,
    family: CacheFamily = "anthropic",
    *,
    tree: Tree | None = None,
    env: Mapping[str, str] | None = None,
    on_request: Callable[[RecordedRequest], None] | None = None,
    window: int = WINDOW,
) -> LoopRun:
    """Run the loop of `steps` steps through `gosling run` (`tree`'s sources; this one by
    default) with `env` added to its environment (settings as `GOSLING_*` variables);
    `on_request` sees every request the fake server receives, before it is answered;
    `window` is the context limit gosling is given."""
    from gosling.context_mgmt.tokens import default_counter

    provider, model = FAMILIES[family]
    tree = tree or Tree("current", REPO)
    replies = LoopReplies(steps, prompt_cache_for(model), default_counter().count_text)
    with tempfile.TemporaryDirectory(prefix="cost-loop-") as tmp, FakeLLMServer() as server:
        work = _workspace(Path(tmp))
        _write_outputs(work, steps)
        server.keep_bodies = False
        server.reply_for = replies.reply
        server.on_request = on_request
        url = server.url if provider == "anthropic" else server.openai_url
        argv = [*_argv(tree, provider, model, url, window), "-t", TASK]
        run = timed_run(argv, cwd=work, env=tree.env(Path(tmp) / "home", **dict(env or {})))
        if run.returncode != 0:
            raise RuntimeError(f"{tree.label}: loop run failed: {run.stderr.decode()[-2000:]}")
        served = len(server.model_requests())
    history = replies.history
    if history is None or len(history.steps) != steps or len(history.replies) != steps + 1:
        raise RuntimeError(f"the wire did not carry the loop's {steps} steps and final answer")
    return LoopRun(
        family, model, replies.requests, history, replies.reported,
        replies.wire_text_tokens, replies.wire_bytes, replies.summaries, served, run,
    )  # fmt: skip


def _argv(tree: Tree, provider: str, model: str, url: str, window: int) -> list[str]:
    return [
        *_gosling(tree), "run", "--provider", provider, "--model", model,
        "--context-limit", str(window), "--base-url", url, "--max-turns", "100000",
    ]  # fmt: skip


def wire_check(run: LoopRun) -> dict[str, Any]:
    """What the wire carried beside what the cost model priced (they must agree)."""
    priced = sum(r.tokens for r in run.requests)
    return {
        "requests": run.served,
        "requests_priced": len(run.requests),
        "wire_text_tokens": run.wire_text_tokens,
        "priced_tokens": priced,
        "reported_input_tokens": run.reported_input_tokens,
        "priced_over_wire": round(priced / max(run.wire_text_tokens, 1), 3),
        "summaries": run.summaries,
    }
