"""The scripted shell loop of issue 16 and what its requests cost under each policy.

The loop: one task, then `steps` model calls that each run one shell command printing
`OUTPUT_BYTES` (8 KB) of realistic output (grep hits, test logs, listings, build lines;
deterministic), then a final answer. The window is 200k tokens.

Policies, each a list of `providers.cache_cost.Request`s priced by the same function
(`policy_figures`):

- `none`: the whole history on every call (past the window a provider would refuse it; it
  is priced anyway, as the ceiling);
- `codex`: Codex CLI's policy: the whole history until a request passes 90% of the window,
  then one summarization call over all of it, after which the history is the user's messages
  (up to 20,000 tokens) and the summary;
- `gosling`: the requests gosling's own reply loop sends (`agent.Agent` driven by a
  `ScriptedProvider` with a shell tool that prints the same outputs), whatever its context
  policy does today. Once the context pipeline lands, this stays the way to price it.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gosling.context_mgmt.request_segments import RequestSegmenter
    from gosling.conversation import Message
    from gosling.providers import ScriptedRequest
    from gosling.providers.cache_cost import Request
    from gosling.providers.prompt_cache import CacheFamily, PromptCache

WINDOW = 200_000
OUTPUT_BYTES = 8 * 1024
CODEX_COMPACT_AT = 0.9
CODEX_USER_MESSAGE_TOKENS = 20_000
LATE_WINDOW = 20
"""The last calls whose largest request is the size a policy settles at: a request right
after a trim is at the bottom of its cycle, one right before at the top, so one call alone
says more about where the cycle is than about the size."""
SUMMARY_TOKENS = 2_000
"""Tokens of the summary a compaction writes (gosling's stub summarizer caps its at 2,000)."""
TASK = "The test suite fails. Find out why and fix it; run the tests after each change."
COMPACTION_PROMPT = (
    "You have exceeded the maximum number of tokens, please stop coding and instead write a "
    "short memento message for the next agent. Your note should summarize what you finished, "
    "what still needs work, and any relevant context."
)
TOOL_NAME = "developer__shell"
SUMMARY_PREFIX = "Another language model summarized the work so far:\n"


def _grep(rng: random.Random, step: int) -> str:
    module = rng.choice(["storage", "api", "billing", "auth", "jobs", "search"])
    name = rng.choice(["load", "save", "retry", "flush", "resolve", "render"])
    return (
        f"src/{module}/handler_{step}_{rng.randint(1, 99)}.py:{rng.randint(1, 900)}:"
        f"    result = {name}_record(session, key=record_{rng.randint(1000, 99999)}, "
        f"timeout={rng.randint(1, 60)})"
    )


def _test_log(rng: random.Random, step: int) -> str:
    status = rng.choice(["PASSED", "PASSED", "PASSED", "FAILED", "SKIPPED"])
    return (
        f"tests/test_{rng.choice(['models', 'views', 'queue', 'cache'])}_{step}.py::"
        f"test_case_{rng.randint(1, 500)}[param{rng.randint(0, 9)}] {status} "
        f"[{rng.randint(0, 100):>3}%] ({rng.random() * 3:.2f}s)"
    )


_WORDS = ("record", "session", "buffer", "index", "payload", "schema", "cursor", "table")
_VERBS = ("load", "store", "flush", "merge", "validate", "render", "compact", "resolve")


def _source(rng: random.Random, step: int) -> str:
    noun, other, verb = rng.choice(_WORDS), rng.choice(_WORDS), rng.choice(_VERBS)
    return rng.choice(
        (
            f"    def {verb}_{noun}(self, {other}: {other.title()}) -> {noun.title()}:",
            f'        """{verb.title()} the {noun} from the {other}; callers hold the lock."""',
            f"        if {other} is None:\n            raise ValueError('{noun} needs a {other}')",
            f"        return self._{noun}s.{verb}({other}, strict=True)",
            f"    # the {noun} is rebuilt when the {other} changes (see engine_{step}.py)",
        )
    )


def _build(rng: random.Random, step: int) -> str:
    return (
        f"[{rng.randint(1, 400)}/{400}] Compiling crate_{step}_{rng.randint(1, 60)} "
        f"v0.{rng.randint(1, 30)}.{rng.randint(0, 9)} warning: unused variable "
        f"`tmp_{rng.randint(1, 99)}` at src/lib.rs:{rng.randint(1, 3000)}:{rng.randint(1, 80)}"
    )


_KINDS: tuple[tuple[str, Callable[[random.Random, int], str]], ...] = (
    ("grep -rn record_ src/", _grep),
    ("pytest -q -rA", _test_log),
    ("sed -n 1,200p src/storage/engine.py", _source),
    ("cargo build 2>&1", _build),
)


def shell_output(step: int, size: int = OUTPUT_BYTES) -> str:
    """`size` bytes (ASCII) of deterministic output for the command of `step`."""
    rng = random.Random(step)
    line = _KINDS[step % len(_KINDS)][1]
    lines: list[str] = []
    length = 0
    while length < size:
        lines.append(line(rng, step))
        length += len(lines[-1]) + 1
    return "\n".join(lines)[:size]


def shell_command(step: int) -> str:
    return f"{_KINDS[step % len(_KINDS)][0]}  # step {step}"


def call_id(step: int) -> str:
    return f"call_{step:04d}"


def scripted_loop(steps: int) -> list[Message]:
    """The loop as a conversation: the task, `steps` shell calls with their outputs, and the
    final answer (the reply of the last call)."""
    from gosling.conversation import Message, TextContent, ToolRequest, ToolResponse

    messages = [Message.user(TASK)]
    for step in range(steps):
        request = ToolRequest(
            id=call_id(step), name=TOOL_NAME, arguments={"command": shell_command(step)}
        )
        messages.append(Message.assistant(f"Step {step}: checking the output.", request))
        output = (TextContent(text=shell_output(step)),)
        messages.append(Message.user(None, ToolResponse(id=call_id(step), content=output)))
    messages.append(Message.assistant("The suite passes now; the fix is in src/storage."))
    return messages


# -- the baselines as requests ------------------------------------------------------------------


def _replies(messages: Sequence[Message]) -> list[int]:
    return [i for i, m in enumerate(messages) if m.role == "assistant"]


def none_requests(
    conversation: Sequence[Message], segmenter: RequestSegmenter, system: str, tools: Sequence[Any]
) -> list[Request]:
    """Every call sends the whole history before its reply."""
    counter = segmenter.counter
    return [
        segmenter.request(
            system, conversation[:i], tools, output_tokens=counter.count_message(conversation[i])
        )
        for i in _replies(conversation)
    ]


def codex_requests(
    conversation: Sequence[Message],
    segmenter: RequestSegmenter,
    system: str,
    tools: Sequence[Any],
    *,
    window: int = WINDOW,
) -> tuple[list[Request], int]:
    """Codex's policy: the whole history until a request passes 90% of the window, then a
    summarization call and a history of the user's messages and the summary. Returns the
    requests (summarization calls included) and the number of compactions."""
    from gosling.conversation import Message

    counter = segmenter.counter
    requests: list[Request] = []
    history: list[Message] = []
    compactions = 0
    start = 0
    for reply_index in _replies(conversation):
        history.extend(conversation[start:reply_index])
        start = reply_index + 1
        request = segmenter.request(system, history, tools)
        if request.tokens > CODEX_COMPACT_AT * window:
            prompt = Message.user(COMPACTION_PROMPT)
            requests.append(
                segmenter.request(system, [*history, prompt], tools, output_tokens=SUMMARY_TOKENS)
            )
            history = [*_user_messages(history, counter), _summary(compactions)]
            compactions += 1
        reply = conversation[reply_index]
        requests.append(
            segmenter.request(system, history, tools, output_tokens=counter.count_message(reply))
        )
        history.append(reply)
    return requests, compactions


def _user_messages(history: Sequence[Message], counter: Any) -> list[Message]:
    """The user's own messages (not tool results, not earlier summaries), newest first up to
    the budget, in their order."""
    kept: list[Message] = []
    budget = CODEX_USER_MESSAGE_TOKENS
    for message in reversed(history):
        text = message.text
        if message.role == "user" and text and not text.startswith(SUMMARY_PREFIX):
            tokens = counter.count_message(message)
            if tokens > budget:
                break
            budget -= tokens
            kept.append(message)
    return kept[::-1]


def _summary(number: int) -> Message:
    from gosling.conversation import Message

    # about SUMMARY_TOKENS tokens of prose (o200k: one token per short word and space)
    words = [f"note{number}", *(["the", "run", "covered", "commands", "and", "findings"] * 400)]
    return Message.user(
        "Another language model summarized the work so far:\n"
        + " ".join(words[: SUMMARY_TOKENS - 12])
    )


# -- gosling's own loop -------------------------------------------------------------------------


async def _drive_gosling(
    steps: int, family: CacheFamily, settings: Mapping[str, Any]
) -> list[ScriptedRequest]:
    from gosling.agent.agent import Agent
    from gosling.agent.config import Settings
    from gosling.agent.tools.base import tool
    from gosling.agent.tools.manager import BuiltinExtension, ExtensionManager
    from gosling.agent.tools.recall import context_extension
    from gosling.providers import ModelConfig, ScriptedProvider, ScriptedReply
    from gosling.providers.testing import ScriptedToolCall

    outputs = {shell_command(step): shell_output(step) for step in range(steps)}

    @tool(name="shell")
    async def shell(command: str) -> str:
        """Run a shell command.

        Args:
            command: The command line.
        """
        return outputs[command]

    calls = iter(range(steps + 1))

    def reply(request: ScriptedRequest) -> ScriptedReply:
        if request.fast:  # a summary the policy asked for: short and deterministic
            return ScriptedReply(text="Summary: the steps so far ran commands and read outputs.")
        step = next(calls)
        if step == steps:
            return ScriptedReply(text="The suite passes now; the fix is in src/storage.")
        call = ScriptedToolCall(TOOL_NAME, {"command": shell_command(step)}, id=call_id(step))
        return ScriptedReply(text=f"Step {step}: checking the output.", tool_calls=[call])

    provider = ScriptedProvider(
        [reply] * (3 * steps + 10), model_config=ModelConfig("bench-model", context_limit=WINDOW)
    )
    tools = ExtensionManager([BuiltinExtension("developer", [shell]), context_extension()])
    # A fixed name: the working dir is in every turn's context, and a random one would move
    # the token counts by a few hundred from run to run.
    project = Path(tempfile.gettempdir()) / "gosling-bench-project"
    project.mkdir(exist_ok=True)
    agent = Agent(
        provider,
        tools=tools,
        config=Settings(max_turns=steps + 10, prompt_cache=family, **settings),
        working_dir=project,
        clock=lambda: datetime(2026, 12, 1, 12, 0, tzinfo=UTC),
    )
    session = agent.new_session()
    async for _ in agent.reply(session, TASK):
        pass
    await session.close()
    return provider.requests


def gosling_sent(
    steps: int, family: CacheFamily = "anthropic", settings: Mapping[str, Any] | None = None
) -> list[ScriptedRequest]:
    """What gosling's reply loop sends on the loop of `steps` steps, request by request,
    when the provider caches prompts like `family` (its trimming decisions depend on it);
    `settings` overrides the defaults (the trade-off curve varies them)."""
    return asyncio.run(_drive_gosling(steps, family, settings or {}))


def recorded_requests(
    sent: Sequence[ScriptedRequest], conversation: Sequence[Message], segmenter: RequestSegmenter
) -> list[Request]:
    """Recorded requests as the cost model sees them, each with its reply's tokens as the
    call's output (a summary the policy asked for counts `SUMMARY_TOKENS`)."""
    counter = segmenter.counter
    replies = iter(_replies(conversation))
    requests = []
    for request in sent:
        if request.fast:
            output = SUMMARY_TOKENS
        else:
            output = counter.count_message(conversation[next(replies)])
        requests.append(
            segmenter.request(request.system, request.messages, request.tools, output_tokens=output)
        )
    return requests


def policy_figures(requests: Sequence[Request], cache: PromptCache) -> dict[str, Any]:
    """What one policy's requests cost under `cache`: totals and the size of the last call."""
    from gosling.providers.cache_cost import price_requests, total_cost

    costs = price_requests(requests, cache)
    totals = total_cost(costs)
    return {
        "calls": totals.calls,
        "tokens_sent": totals.sent,
        "cached_share": round(totals.cached_share, 4),
        "cache_write_tokens": totals.cache_write,
        "input_cost": round(totals.input_cost),
        "cost": round(totals.cost),
        "peak_request": totals.peak,
        "last_request": costs[-1].sent if costs else 0,
        "late_peak_request": max((c.sent for c in costs[-LATE_WINDOW:]), default=0),
    }
