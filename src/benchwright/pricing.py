"""Model prices in US dollars per million tokens, for agents whose logs give tokens but no cost.

Prices are the providers' list prices for standard (non-batch, uncached) use; a model not listed
has no price, and its cost is reported as unknown (0.0) rather than guessed. Names are matched
without a provider prefix (`anthropic/claude-sonnet-4-5` finds `claude-sonnet-4-5`), and a dated
or suffixed name finds its family (`gpt-4.1-2025-04-14` finds `gpt-4.1`).

A run may override either price (`input_price_per_mtok`, `output_price_per_mtok`); `run_price`
is the one rule every agent applies: an override replaces only its own price, the other comes
from the table, or is 0 when the model is not listed.
"""

from __future__ import annotations

from pydantic import BaseModel


class Price(BaseModel):
    """What a million tokens cost."""

    input: float
    """US dollars per million prompt tokens."""
    output: float
    """US dollars per million generated tokens."""

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """The cost of one call, or of totals."""
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


PRICES: dict[str, Price] = {
    "gpt-5": Price(input=1.25, output=10.0),
    "gpt-5-mini": Price(input=0.25, output=2.0),
    "gpt-5-nano": Price(input=0.05, output=0.40),
    "gpt-5-codex": Price(input=1.25, output=10.0),
    "gpt-4.1": Price(input=2.0, output=8.0),
    "gpt-4.1-mini": Price(input=0.40, output=1.60),
    "gpt-4.1-nano": Price(input=0.10, output=0.40),
    "gpt-4o": Price(input=2.50, output=10.0),
    "gpt-4o-mini": Price(input=0.15, output=0.60),
    "o3": Price(input=2.0, output=8.0),
    "o4-mini": Price(input=1.10, output=4.40),
    "claude-opus-4-1": Price(input=15.0, output=75.0),
    "claude-opus-4": Price(input=15.0, output=75.0),
    "claude-sonnet-4-5": Price(input=3.0, output=15.0),
    "claude-sonnet-4": Price(input=3.0, output=15.0),
    "claude-3-7-sonnet": Price(input=3.0, output=15.0),
    "claude-haiku-4-5": Price(input=1.0, output=5.0),
    "claude-3-5-haiku": Price(input=0.80, output=4.0),
    "gemini-2.5-pro": Price(input=1.25, output=10.0),
    "gemini-2.5-flash": Price(input=0.30, output=2.50),
    "gemini-2.5-flash-lite": Price(input=0.10, output=0.40),
}


def price_of(model: str | None) -> Price | None:
    """The listed price of `model`, or None when it is not in the table."""
    if not model:
        return None
    name = model.rsplit("/", 1)[-1].lower()
    matches = [key for key in PRICES if name == key or name.startswith(key + "-")]
    return PRICES[max(matches, key=len)] if matches else None


def run_price(model: str | None, input_override: float | None,
              output_override: float | None) -> Price | None:
    """The price a run charges `model` at: the table's, with each given override in place of its
    own price (0 for a price neither given nor listed); None with no override and no listing."""
    listed = price_of(model)
    if input_override is None and output_override is None:
        return listed
    return Price(input=_pick(input_override, listed.input if listed else None),
                 output=_pick(output_override, listed.output if listed else None))


def _pick(override: float | None, listed: float | None) -> float:
    return override if override is not None else listed or 0.0
