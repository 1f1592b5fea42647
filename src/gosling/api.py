"""The functions of gosling's public API that are more than a re-export (see `gosling`).

Each async function has a `_sync` twin for synchronous code; the twins work inside a running
event loop too (`run_sync`: a worker thread with its own loop).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from gosling.context_mgmt.compact import compact_messages
from gosling.context_mgmt.context_size import DEFAULT_COMPACTION_THRESHOLD
from gosling.context_mgmt.context_size import needs_compaction as _over_threshold
from gosling.context_mgmt.model_view import model_view
from gosling.context_mgmt.pair_summarizer import summarize_tool_pair
from gosling.context_mgmt.summarize import summarize
from gosling.conversation import Message
from gosling.hints.headers import HintHeaders
from gosling.hints.loader import load_hint_files
from gosling.providers.run_sync import run_sync

if TYPE_CHECKING:
    from gosling.context_mgmt.tokens import TokenCounter
    from gosling.providers import ToolSpec

P = ParamSpec("P")
T = TypeVar("T")


def count_tokens(
    messages: Sequence[Message],
    *,
    system: str = "",
    tools: Sequence[ToolSpec] = (),
    counter: TokenCounter | None = None,
) -> int:
    """Tokens of a whole request (o200k_base, offline): the system prompt, the agent-visible
    `messages` as given and the tool schemas, with the per-message and reply overheads. For
    what a model is actually sent, count `model_view(messages)`."""
    from gosling.context_mgmt.tokens import default_counter

    return (counter or default_counter()).count_chat(system, messages, tools)


def needs_compaction(
    messages: Sequence[Message],
    context_limit: int,
    *,
    system: str = "",
    tools: Sequence[ToolSpec] = (),
    threshold: float = DEFAULT_COMPACTION_THRESHOLD,
    counter: TokenCounter | None = None,
) -> bool:
    """True when the request for `messages` (as the model is sent them, with `system` and
    `tools`) fills strictly more than `threshold` of `context_limit` tokens. A threshold of
    0, 1 or more, or a window of 0, never asks for compaction."""
    tokens = count_tokens(model_view(messages), system=system, tools=tools, counter=counter)
    return _over_threshold(tokens, context_limit, threshold)


def sync_form(function: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """A synchronous twin of the coroutine function `function` (same arguments)."""

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(function(*args, **kwargs))

    call.__doc__ = (
        f"Synchronous form of `{function.__name__}`: the same arguments and result; works "
        "inside a running event loop too (on a worker thread with its own loop).\n\n"
        + (function.__doc__ or "")
    )
    call.__name__ = call.__qualname__ = f"{function.__name__}_sync"
    return call


compact = compact_messages
compact_sync = sync_form(compact_messages)
summarize_sync = sync_form(summarize)
summarize_tool_pair_sync = sync_form(summarize_tool_pair)


def load_hints(
    working_dir: str | os.PathLike[str],
    filenames: Sequence[str] | None = None,
    *,
    global_dir: str | os.PathLike[str] | None = None,
    home_dir: str | os.PathLike[str] | None = None,
    headers: HintHeaders | None = None,
) -> str:
    """The project's hint files for `working_dir` (`AGENTS.md`, `.goosehints` by default,
    from the git root down), as one block of system-prompt text; empty when there are none.

    Global hints are read only from the directories passed: `global_dir` (the command line
    passes gosling's config dir) and `home_dir`'s `.agents/AGENTS.md`. See
    `gosling.hints.collect_hints` for the report of what was read and refused."""
    return load_hint_files(
        Path(working_dir), filenames, global_dir=global_dir, home_dir=home_dir, headers=headers
    )


__all__ = [
    "compact",
    "compact_sync",
    "count_tokens",
    "load_hints",
    "model_view",
    "needs_compaction",
    "summarize",
    "summarize_sync",
    "summarize_tool_pair",
    "summarize_tool_pair_sync",
    "sync_form",
]
