"""The scripted shell loop of issue 16 and what its requests cost under each policy.

The loop: one task, then `steps` model calls that each run one shell command printing
`OUTPUT_BYTES` (8 KB) of realistic output (grep hits, test logs, listings, build lines;
deterministic), then a final answer. The window is 200k tokens.

Every policy is priced from what the wire carries (issue 30): `bench.wire_loop` runs the
loop through a real `gosling run` (the real SDK, the developer extension's shell running
`cat` of the pre-written outputs) against the loopback fake server, which answers each
request with the usage a provider would report for it; `bench.wire_requests` turns each body
into a `providers.cache_cost.Request` of its o200k text tokens. Policies, each a list of
`Request`s priced by the same function (`policy_figures`):

- `gosling`: the requests the run sent, as sent (its context policy, breakpoints and
  per-turn context included);
- `none`: the whole history on every call (past the window a provider would refuse it; it
  is priced anyway, as the ceiling);
- `codex`: Codex CLI's policy: the whole history until a request passes 90% of the window,
  then one summarization call over all of it, after which the history is the user's messages
  (up to 20,000 tokens) and the summary.

`none` and `codex` are built from the same wire (`WireHistory`): gosling's tools and system
prompt, and each message as gosling first sent it (the task, each call, each result with the
shell's framing), so all three count the same tokens for the same content. They leave out
gosling's per-turn context block (about 50 tokens a call: the time, the working directory and
the context's size), which is gosling's own, and put Anthropic's breakpoints where gosling
would (the system prompt and the last two user turns).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bench.wire_requests import (
    Api,
    WireMessage,
    WireSegmenter,
    is_plain_user,
    message_text,
    user_text,
)

if TYPE_CHECKING:
    from gosling.conversation import Message
    from gosling.providers.cache_cost import Request, Segment
    from gosling.providers.prompt_cache import PromptCache

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
FINAL_ANSWER = "The suite passes now; the fix is in src/storage."
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
    messages.append(Message.assistant(FINAL_ANSWER))
    return messages


# -- the loop as the wire carried it -------------------------------------------------------------


@dataclass
class WireHistory:
    """The loop before any policy trimmed it, in the wire's own shape: what `none` and
    `codex` send."""

    api: Api
    head: Segment
    """gosling's tools and system prompt (Anthropic; Chat: the tools), as one segment."""
    lead: list[WireMessage] = field(default_factory=list)
    """Messages before the task, kept by every policy (Chat: the system prompt)."""
    task: list[WireMessage] = field(default_factory=list)
    steps: list[list[WireMessage]] = field(default_factory=list)
    """Per step: the assistant's tool call and the result, as gosling first sent them."""
    replies: list[int] = field(default_factory=list)
    """Output tokens of the reply to each call: one per step, then the final answer."""


def result_tokens(history: WireHistory, segmenter: WireSegmenter) -> list[int]:
    """Tokens of each step's tool result as the wire carried it (framing included)."""
    return [sum(s.tokens for s in segmenter.segments(step[-1])) for step in history.steps]


def none_requests(history: WireHistory, segmenter: WireSegmenter) -> list[Request]:
    """Every call sends the whole history before its reply."""
    messages = list(history.task)
    requests = []
    for call, output in enumerate(history.replies):
        if call:
            messages.extend(history.steps[call - 1])
        requests.append(segmenter.request(history.head, [*history.lead, *messages], output))
    return requests


def codex_requests(
    history: WireHistory, segmenter: WireSegmenter, *, window: int = WINDOW
) -> tuple[list[Request], int]:
    """Codex's policy: the whole history until a request passes 90% of the window, then a
    summarization call and a history of the user's messages and the summary. Returns the
    requests (summarization calls included) and the number of compactions."""
    api, lead = history.api, history.lead
    requests: list[Request] = []
    messages = list(history.task)
    compactions = 0
    for call, output in enumerate(history.replies):
        if call:
            messages.extend(history.steps[call - 1])
        if segmenter.request(history.head, [*lead, *messages]).tokens > CODEX_COMPACT_AT * window:
            prompt = user_text(COMPACTION_PROMPT, api)
            summarize = [*lead, *messages, prompt]
            requests.append(segmenter.request(history.head, summarize, SUMMARY_TOKENS))
            summary = user_text(summary_text(compactions), api)
            messages = [*_user_messages(messages, segmenter), summary]
            compactions += 1
        requests.append(segmenter.request(history.head, [*lead, *messages], output))
    return requests, compactions


def _user_messages(messages: Sequence[WireMessage], segmenter: WireSegmenter) -> list[WireMessage]:
    """The user's own messages (not tool results, not earlier summaries), newest first up to
    the budget, in their order."""
    kept: list[WireMessage] = []
    budget = CODEX_USER_MESSAGE_TOKENS
    for message in reversed(messages):
        plain = is_plain_user(message, segmenter.api)
        if plain and not message_text(message).startswith(SUMMARY_PREFIX):
            tokens = sum(s.tokens for s in segmenter.segments(message))
            if tokens > budget:
                break
            budget -= tokens
            kept.append(message)
    return kept[::-1]


def summary_text(number: int) -> str:
    """About `SUMMARY_TOKENS` tokens of prose (o200k: one token per short word and space)."""
    words = [f"note{number}", *(["the", "run", "covered", "commands", "and", "findings"] * 400)]
    return SUMMARY_PREFIX + " ".join(words[: SUMMARY_TOKENS - 12])


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
