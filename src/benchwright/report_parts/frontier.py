"""The cost-accuracy frontier: each run (agent x model) as a point of solve rate against cost per
problem, and against agent time per problem; the Pareto frontier is the runs no other run beats
on both (as high a solve rate for no more cost, one of the two strictly better). A run whose cost
is unknown is left off the cost frontier and named (`cost_left_off`), never placed at $0.
`frontier_of` is the one rule: `report --frontier`, `benchwright.frontier` and the viewer's
overview all call it on the same points.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, Field

from benchwright.stats.estimates import Estimate


class RunPoint(BaseModel):
    """One run on the frontier's axes."""

    run_dir: str
    """The run folder."""
    agent: str
    """The run's agent."""
    model: str | None = None
    """The run's model."""
    label: str = ""
    """How charts and tables name it: `agent · model` (the folder's name added when two runs
    would share it); set by `frontier_of`."""
    solve_rate: float
    """Checkpoints solved (report.md's first figure)."""
    solve_rate_ci: Estimate | None = None
    """That rate with its 95% CI over problems (None where it was not computed)."""
    cost_per_problem: float | None = None
    """Model cost over attempts (problem x trial), US dollars; None: unknown (no price)."""
    time_per_problem: float | None = None
    """Agent seconds over attempts."""


class Frontier(BaseModel):
    """The runs and their two Pareto frontiers."""

    format: Literal["benchwright.frontier/1"] = "benchwright.frontier/1"
    """The section's format and version."""
    points: list[RunPoint] = Field(default_factory=list)
    """Every run placed, in the order given."""
    cost: list[str] = Field(default_factory=list)
    """The labels on the cost frontier, cheapest first."""
    time: list[str] = Field(default_factory=list)
    """The labels on the time frontier, fastest first."""
    cost_left_off: list[str] = Field(default_factory=list)
    """Runs left off the cost frontier because their cost is unknown."""


def frontier_of(points: list[RunPoint]) -> Frontier:
    """Both frontiers of these runs (labels made unique)."""
    labelled = _labelled(points)
    return Frontier(
        points=labelled,
        cost=pareto(labelled, lambda p: p.cost_per_problem),
        time=pareto(labelled, lambda p: p.time_per_problem),
        cost_left_off=[p.label for p in labelled if p.cost_per_problem is None])


def pareto(points: list[RunPoint], spend: Callable[[RunPoint], float | None]) -> list[str]:
    """Labels of the points no other point dominates (solve rate at least as high for at most
    the spend, one strictly better), by spend; points without a spend are left out."""
    known = [p for p in points if spend(p) is not None]
    kept = [p for p in known if not any(_dominates(q, p, spend) for q in known)]
    return [p.label for p in sorted(kept, key=lambda p: (spend(p), -p.solve_rate))]


def _dominates(q: RunPoint, p: RunPoint, spend: Callable[[RunPoint], float | None]) -> bool:
    sq, sp = spend(q), spend(p)
    assert sq is not None and sp is not None
    return q.solve_rate >= p.solve_rate and sq <= sp and (q.solve_rate > p.solve_rate or sq < sp)


def _labelled(points: list[RunPoint]) -> list[RunPoint]:
    names = [f"{p.agent} · {p.model}" if p.model else p.agent for p in points]
    twice = {n for n, k in Counter(names).items() if k > 1}
    return [p.model_copy(update={"label": f"{n} ({p.run_dir.rstrip('/').rsplit('/', 1)[-1]})"
                                 if n in twice else n}) for p, n in zip(points, names, strict=True)]
