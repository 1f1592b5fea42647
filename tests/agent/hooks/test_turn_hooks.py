"""Hooks in `Agent.reply` itself, against a `ScriptedProvider`."""

from __future__ import annotations

from pathlib import Path

from gosling.agent.agent import Agent
from gosling.agent.events import Notice, TurnFinished
from gosling.agent.hooks.config import ConfiguredHook, HookConfig
from gosling.agent.hooks.steps import MAX_STOP_BLOCKS
from gosling.agent.tools.manager import ExtensionManager
from gosling.providers import ModelConfig, ScriptedProvider, ScriptedReply


async def test_a_stop_hook_that_always_blocks_cannot_spend_the_whole_turn(tmp_path: Path) -> None:
    replies = [ScriptedReply(text=f"done {k}") for k in range(MAX_STOP_BLOCKS + 1)]
    provider = ScriptedProvider(replies, model_config=ModelConfig("m", context_limit=100_000))
    hook = ConfiguredHook("Stop", "", "echo 'not yet' >&2; exit 2", 30.0, "test")
    agent = Agent(
        provider, tools=ExtensionManager(), working_dir=tmp_path, hooks=HookConfig((hook,))
    )
    session = agent.open_session()
    events = [event async for event in agent.reply(session, "finish")]
    finished = events[-1]
    assert isinstance(finished, TurnFinished)
    assert finished.stop_reason == "end_turn" and finished.turns == MAX_STOP_BLOCKS + 1
    assert any(isinstance(e, Notice) and "kept this turn going" in e.text for e in events)
    provider.assert_complete()
