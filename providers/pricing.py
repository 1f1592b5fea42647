"""What a model's tokens cost, for the `total_cost_usd` of a run.

List prices in US dollars per million tokens, by longest matching name prefix like the model
registry; a price declared in config (`[models."x".price] input = 3.0 ...`) always wins, and
a model with no known price costs `None`, never a guessed 0. `Usage.input_tokens` counts every
input token, so the uncached part is what is left after cache reads and writes.

Anthropic bills a cache write at 1.25x and a cache read at 0.1x of the input price (5-minute
cache); OpenAI bills no cache write and lists its cached-input price per model.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from gosling.providers.base import Usage
from gosling.providers.registry import table_entry

PER_TOKENS = 1_000_000


class ModelPrice(BaseModel):
    """US dollars per million tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    """None: cache reads cost what input costs."""
    cache_write: float | None = Field(default=None, ge=0)
    """None: cache writes cost what input costs."""

    def cost(self, usage: Usage) -> float:
        read, write = usage.cache_read_tokens, usage.cache_write_tokens
        fresh = max((usage.input_tokens or 0) - read - write, 0)
        cache_read = self.input if self.cache_read is None else self.cache_read
        cache_write = self.input if self.cache_write is None else self.cache_write
        dollars = (
            fresh * self.input
            + read * cache_read
            + write * cache_write
            + (usage.output_tokens or 0) * self.output
        )
        return dollars / PER_TOKENS


def _anthropic(input_price: float, output_price: float) -> ModelPrice:
    return ModelPrice(
        input=input_price,
        output=output_price,
        cache_read=round(input_price * 0.1, 6),
        cache_write=round(input_price * 1.25, 6),
    )


def _openai(input_price: float, output_price: float, cached: float) -> ModelPrice:
    return ModelPrice(input=input_price, output=output_price, cache_read=cached, cache_write=0.0)


MODEL_PRICES: dict[str, ModelPrice] = {
    "claude-opus-4": _anthropic(15.0, 75.0),
    "claude-opus-4-1": _anthropic(15.0, 75.0),
    "claude-opus-4-5": _anthropic(5.0, 25.0),
    "claude-sonnet-4": _anthropic(3.0, 15.0),
    "claude-sonnet-4-5": _anthropic(3.0, 15.0),
    "claude-sonnet-4-6": _anthropic(3.0, 15.0),
    "claude-haiku-4-5": _anthropic(1.0, 5.0),
    "claude-3-7-sonnet": _anthropic(3.0, 15.0),
    "claude-3-5-haiku": _anthropic(0.8, 4.0),
    "gpt-5": _openai(1.25, 10.0, 0.125),
    "gpt-5-mini": _openai(0.25, 2.0, 0.025),
    "gpt-5-nano": _openai(0.05, 0.4, 0.005),
    "gpt-4.1": _openai(2.0, 8.0, 0.5),
    "gpt-4.1-mini": _openai(0.4, 1.6, 0.1),
    "gpt-4.1-nano": _openai(0.1, 0.4, 0.025),
    "gpt-4o": _openai(2.5, 10.0, 1.25),
    "gpt-4o-mini": _openai(0.15, 0.6, 0.075),
    "o3": _openai(2.0, 8.0, 0.5),
    "o4-mini": _openai(1.1, 4.4, 0.275),
}


def lookup_price(
    model: str, overrides: Mapping[str, ModelPrice] | None = None
) -> ModelPrice | None:
    """The price of `model`: a configured one for this exact name, else the table's."""
    wanted = model.strip().lower()
    for key, price in (overrides or {}).items():
        if key.strip().lower() == wanted:
            return price
    entry = table_entry(model, MODEL_PRICES)
    return MODEL_PRICES[entry] if entry is not None else None


def cost_usd(
    model: str, usage: Usage, overrides: Mapping[str, ModelPrice] | None = None
) -> float | None:
    """What `usage` of `model` cost, or None when its price is unknown."""
    price = lookup_price(model, overrides)
    return None if price is None else round(price.cost(usage), 6)
