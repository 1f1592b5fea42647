"""Builders for reply-loop tests: an agent on a ScriptedProvider with real tools and store."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gosling.agent.agent import Agent
from gosling.agent.config import Settings
from gosling.agent.events import Event, TurnFinished
from gosling.agent.session import AgentSession
from gosling.agent.tool_runner import Approver
from gosling.agent.tools.developer import developer_extension
from gosling.agent.tools.manager import ExtensionManager
from gosling.agent.tools.recall import context_extension
from gosling.conversation import Message, fix_conversation
from gosling.providers import ModelConfig, ScriptedProvider
from gosling.providers.testing import Step
from gosling.sessions import SqliteSessionStore


def make_agent(
    tmp_path: Path,
    steps: Sequence[Step],
    *,
    context_limit: int = 200_000,
    store: bool = True,
    approver: Approver | None = None,
    provider: ScriptedProvider | None = None,
    **settings: Any,
) -> tuple[Agent, ScriptedProvider, SqliteSessionStore | None]:
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    provider = provider or ScriptedProvider(
        steps, model_config=ModelConfig("scripted", context_limit=context_limit)
    )
    tools = ExtensionManager([developer_extension(), context_extension()])
    db = SqliteSessionStore(tmp_path / "sessions.db") if store else None
    agent = Agent(
        provider,
        tools=tools,
        session_store=db,
        config=Settings(**settings),
        working_dir=workdir,
        approver=approver,
    )
    return agent, provider, db


async def run_turn(
    agent: Agent, session: AgentSession, text: str
) -> tuple[list[Event], TurnFinished]:
    events = [event async for event in agent.reply(session, text)]
    finished = events[-1]
    assert isinstance(finished, TurnFinished)
    return events, finished


def assert_valid_requests(provider: ScriptedProvider) -> None:
    """Every request the model got was a valid conversation."""
    for request in provider.requests:
        _, issues = fix_conversation(list(request.messages))
        assert issues == [], issues


def texts(messages: Sequence[Message]) -> list[str]:
    return [m.text for m in messages]
