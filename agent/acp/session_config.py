"""A session's permission modes and models as ACP session modes and config options.

Both forms are offered: older clients read `modes`, newer ones `configOptions` (a `mode`
and a `model` select). The model list is the provider's: the models gosling knows prices
and limits for that the provider serves (Anthropic, OpenAI), the models a local Ollama has
pulled, and whatever the user's config names; the current model always comes first.
"""

from __future__ import annotations

from collections.abc import Iterable

from acp.schema import (
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

from gosling.agent.config import Settings
from gosling.providers.model_family import model_mismatch
from gosling.providers.pricing import MODEL_PRICES

MODE_OPTION = "mode"
MODEL_OPTION = "model"
MODES: tuple[tuple[str, str, str], ...] = (
    ("auto", "Auto", "Run every tool call without asking."),
    ("approve", "Approve", "Ask before every tool call."),
    (
        "smart_approve",
        "Smart approve",
        "Ask before tool calls that change things; read-only tools run at once.",
    ),
    ("chat", "Chat", "No tools: the model only talks."),
)
MODE_IDS = tuple(mode for mode, _, _ in MODES)
CATALOGUED = frozenset({"anthropic", "openai", "openai-responses"})
"""Providers whose models gosling's price table lists."""


def mode_state(current: str) -> SessionModeState:
    return SessionModeState(
        current_mode_id=current,
        available_modes=[
            SessionMode(id=mode, name=name, description=text) for mode, name, text in MODES
        ],
    )


def config_options(mode: str, model: str, models: Iterable[str]) -> list[SessionConfigOptionSelect]:
    return [
        SessionConfigOptionSelect(
            type="select",
            id=MODE_OPTION,
            name="Mode",
            description="When gosling asks before running a tool.",
            category="mode",
            current_value=mode,
            options=[
                SessionConfigSelectOption(value=m, name=name, description=text)
                for m, name, text in MODES
            ],
        ),
        SessionConfigOptionSelect(
            type="select",
            id=MODEL_OPTION,
            name="Model",
            description="The model the next call goes to (same provider).",
            category="model",
            current_value=model,
            options=[SessionConfigSelectOption(value=name, name=name) for name in models],
        ),
    ]


def model_choices(
    provider: str, current: str, settings: Settings, local: Iterable[str] = ()
) -> list[str]:
    """The models to offer for `provider`, the current one first, each once."""
    names = [*(n for n in (settings.model, settings.fast_model) if n), *settings.models, *local]
    if provider in CATALOGUED:
        names += list(MODEL_PRICES)
    seen: dict[str, None] = {current: None}
    for name in names:
        if name and model_mismatch(provider, name) is None:
            seen.setdefault(name, None)
    return list(seen)
