"""A program using the library API end to end, run by the import-cost and install tests.

It compacts a short history with a home-made model, wraps the model in `CompactingProvider`,
converts messages and loads hints; it prints the modules it ended up importing that belong
to the command line's stack, one line `CLI_STACK=<names>`."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence

import gosling
from gosling import CompactingProvider, FunctionProvider, Message

CLI_STACK = ("prompt_toolkit", "rich", "click", "mcp", "tree_sitter", "acp", "tomlkit")


def model(system: str, messages: Sequence[Message]) -> str:
    return '{"current_work": "testing the library", "next_step": "ship it"}'


def main() -> None:
    provider = FunctionProvider(model)
    history = [Message.user("hi"), Message.assistant("hello"), Message.user("go on")]
    result = gosling.compact_sync(provider, history)
    assert "testing the library" in result.agent_view[0].text
    wrapped = CompactingProvider(provider)
    reply, _ = wrapped.complete_sync("be brief", history)
    assert reply.text
    assert gosling.count_tokens(gosling.model_view(result.messages)) > 0
    system, back = gosling.from_openai_chat(gosling.to_openai_chat(history, system="s"))
    assert system == "s" and [m.text for m in back] == [m.text for m in history]
    gosling.to_anthropic(history)
    gosling.to_openai_responses(history)
    with tempfile.TemporaryDirectory() as directory:
        assert gosling.load_hints(directory) == ""
        gosling.SubdirectoryHintTracker().load_new_hints(directory)
    loaded = sorted({name.split(".")[0] for name in sys.modules} & set(CLI_STACK))
    print("CLI_STACK=" + ",".join(loaded))


if __name__ == "__main__":
    main()
