"""Model prices in US dollars per million tokens, for agents whose logs give tokens but no cost.

Prices are the providers' list prices for standard (non-batch, uncached) use; a model not listed
has no price, and its cost is unknown (None), never guessed and never 0: `format_cost` shows it as
"unknown", and a sum with unknown parts as "$1.20 + unknown" (`CostSum`). Names are matched
without a provider prefix (`anthropic/claude-sonnet-4-5` finds `claude-sonnet-4-5`), and a dated
or suffixed name finds its family (`gpt-4.1-2025-04-14` finds `gpt-4.1`).

A run may override either price (`input_price_per_mtok`, `output_price_per_mtok`; `--price-in`,
`--price-out`); `run_price` is the one rule every agent applies: an override replaces only its own
price, the other comes from the table; a model not listed needs both, else its price is unknown.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

UNKNOWN = "unknown"


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
    own price; None when either price is neither given nor listed (never a made-up 0)."""
    listed = price_of(model)
    per_in = input_override if input_override is not None else listed.input if listed else None
    per_out = output_override if output_override is not None else \
        listed.output if listed else None
    return None if per_in is None or per_out is None else Price(input=per_in, output=per_out)


def cost_of(price: Price | None, input_tokens: int, output_tokens: int) -> float | None:
    """What these tokens cost at `price`: None (unknown) without a price, unless nothing was
    spent (no tokens cost nothing whatever the price)."""
    if price is None:
        return None if input_tokens or output_tokens else 0.0
    return price.cost(input_tokens, output_tokens)


class CostSum(BaseModel):
    """A sum of costs some of which may be unknown: what is known, and how many parts are not."""

    known_usd: float = 0.0
    """The sum of the known costs, in US dollars."""
    unknown: int = 0
    """Parts whose cost is unknown (their tokens were spent at no known price)."""
    parts: int = 0
    """Parts summed."""

    @classmethod
    def of(cls, costs: Iterable[float | None]) -> CostSum:
        """The sum of `costs` (None: unknown)."""
        values = list(costs)
        known = [c for c in values if c is not None]
        return cls(known_usd=round(sum(known), 8), unknown=len(values) - len(known),
                   parts=len(values))

    @property
    def usd(self) -> float | None:
        """The total when every part is known, else None."""
        return None if self.unknown else self.known_usd

    @property
    def partial_usd(self) -> float | None:
        """The known part, None when no part is known (every cost unknown)."""
        return None if self.unknown and self.unknown == self.parts else self.known_usd

    def text(self, digits: int = 4, dollar: bool = True) -> str:
        """"$1.2000", "$1.2000 + unknown" or "unknown"."""
        return format_cost(self.partial_usd, self.unknown > 0, digits, dollar)


def format_cost(usd: float | None, plus_unknown: bool = False, digits: int = 4,
                dollar: bool = True) -> str:
    """A cost as people read it: "unknown" for None, "$x" (`dollar`) or "x", and " + unknown"
    when unknown parts are left out of `usd`."""
    if usd is None or (plus_unknown and usd == 0):
        return UNKNOWN
    text = f"{'$' if dollar else ''}{usd:.{digits}f}"
    return f"{text} + {UNKNOWN}" if plus_unknown else text
