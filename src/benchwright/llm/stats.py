"""What a cassette holds, per conversation and per agent: calls, tokens, recorded time and the
cost recorded (the provider's own figure, else the price table's; unknown stays unknown)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from benchwright.llm.cassette import conversation_files, read_conversation, read_header
from benchwright.llm.models import Exchange
from benchwright.llm.pricing import CostSum, cost_of, price_of


class Traffic(BaseModel):
    """What some calls added up to."""

    calls: int
    """Requests recorded."""
    errors: int
    """Of them, answered with an HTTP error (4xx, 5xx)."""
    input_tokens: int
    """Prompt tokens the responses reported."""
    output_tokens: int
    """Generated tokens the responses reported."""
    cost_usd: float | None
    """The known cost recorded; None when no call's cost is known (no price, none reported)."""
    cost_unknown: int
    """Calls whose cost is unknown (left out of `cost_usd`)."""
    model_time_s: float
    """Seconds the endpoint took over the calls (what a replay does not spend)."""


class ConversationRow(Traffic):
    """One conversation of the cassette."""

    key: str
    """Which conversation (`coding/PROBLEM/trial_N/CHECKPOINT/attempt_K`, `judge`, ...)."""
    agent: str
    """Who talked."""
    model: str | None
    """The model the run named."""


class AgentStats(Traffic):
    """One agent's totals over the cassette."""

    agent: str
    """The agent (or `judge`)."""
    conversations: int
    """Conversations recorded."""


class CassetteStats(BaseModel):
    """`llm cassette stats`: the cassette's header and its totals per agent."""

    cassette: Path
    """The folder."""
    format: str
    """Its format and version."""
    created: str
    """When recording began."""
    benchwright: str
    """The version that recorded it."""
    conversations: list[ConversationRow]
    """Every conversation, in name order."""
    agents: list[AgentStats]
    """Totals per agent, by name."""


def exchange_cost(exchange: Exchange) -> float | None:
    """One call's cost: the provider's figure, else the price table's (None: unknown)."""
    if exchange.cost_usd is not None:
        return exchange.cost_usd
    return cost_of(price_of(exchange.model), exchange.input_tokens, exchange.output_tokens)


def cassette_stats(folder: Path) -> CassetteStats:
    """Read every conversation of the cassette (an untrusted folder) and total it."""
    header = read_header(folder)
    rows = [row for rel in conversation_files(folder) if (row := _row(folder, rel)) is not None]
    agents = sorted({r.agent for r in rows})
    return CassetteStats(cassette=folder, format=header.format, created=header.created,
                         benchwright=header.benchwright, conversations=rows,
                         agents=[_agent(a, [r for r in rows if r.agent == a]) for a in agents])


def _row(folder: Path, rel: str) -> ConversationRow | None:
    found = read_conversation(folder, rel)
    if found is None:  # gone (or swapped for a link) since it was listed
        return None
    header, exchanges = found
    costs = CostSum.of(exchange_cost(e) for e in exchanges)
    return ConversationRow(
        key=header.key, agent=header.agent, model=header.model, calls=len(exchanges),
        errors=sum(e.status >= 400 for e in exchanges),
        input_tokens=sum(e.input_tokens for e in exchanges),
        output_tokens=sum(e.output_tokens for e in exchanges), cost_usd=costs.partial_usd,
        cost_unknown=costs.unknown, model_time_s=round(sum(e.duration_s for e in exchanges), 3))


def _agent(agent: str, rows: list[ConversationRow]) -> AgentStats:
    known = [r.cost_usd for r in rows if r.cost_usd is not None]
    unknown = sum(r.cost_unknown for r in rows)
    return AgentStats(agent=agent, conversations=len(rows), calls=sum(r.calls for r in rows),
                      errors=sum(r.errors for r in rows),
                      input_tokens=sum(r.input_tokens for r in rows),
                      output_tokens=sum(r.output_tokens for r in rows),
                      cost_usd=round(sum(known), 8) if known or not unknown else None,
                      cost_unknown=unknown,
                      model_time_s=round(sum(r.model_time_s for r in rows), 3))
