"""A coding run's totals (cost, tokens, time) and rates, from its journal records."""

from __future__ import annotations

from collections.abc import Iterable

from benchwright.coding.agents.base import AgentResult
from benchwright.coding.attempts.models import CheckpointRecord, InfraErrorRecord, RunTotals
from benchwright.errors import UserInputError
from benchwright.llm.pricing import CostSum


def run_totals(records: Iterable[CheckpointRecord],
               infra: Iterable[InfraErrorRecord] = ()) -> RunTotals:
    """Sums over graded checkpoints and, for spend, over turns stopped by the provider too:
    that money and time was spent even though the turn is not scored."""
    records = list(records)  # a cost is a known sum plus its unknown parts, never 0 for unknown
    agents: list[AgentResult] = [r.agent for r in records] + [i.agent for i in infra]
    cost = CostSum.of(a.usage.cost_usd for a in agents)
    return RunTotals(
        cost_usd=cost.partial_usd, cost_unknown=cost.unknown,
        input_tokens=sum(a.usage.input_tokens for a in agents),
        output_tokens=sum(a.usage.output_tokens for a in agents),
        cached_input_tokens=sum(a.usage.cached_input_tokens for a in agents),
        steps=sum(a.usage.steps for a in agents),
        agent_time_s=sum(a.duration_s for a in agents),
        grading_time_s=sum(r.grade_duration_s for r in records))


def rate(numerator: int, denominator: int) -> float | None:
    """numerator / denominator, None when there is nothing to divide by."""
    if denominator and not 0 <= numerator <= denominator:
        raise UserInputError(f"a rate would be {numerator} of {denominator}: the run's records "
                             "contradict each other", hint="the run folder was changed by hand; "
                             "restore it or start a new run")
    return numerator / denominator if denominator else None


def last_finished(records: Iterable[CheckpointRecord]) -> str | None:
    """The latest `finished_at` (ISO 8601 strings in UTC sort as times)."""
    return max((r.finished_at for r in records), default=None)
