"""Decisions about a comparison, shared by the CLI and Python: the plan before a run
(`benchwright plan`), the regression gate (`report --fail-if-worse`), and the per-cluster counts
both read (docs/statistics.md).

The figure compared is each track's headline rate over its clusters: for the coding track,
problems solved (an attempt solves every checkpoint) or checkpoints solved, per problem; for
the web track, the pass rate per intent template (tasks of one template are alike, so the
template is the cluster).
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from benchwright.errors import RegressionFound, UserInputError
from benchwright.stats.estimates import MIN_CLUSTERS, Estimate, paired_difference_ci
from benchwright.stats.planning import Plan, plan, plan_mde, population_of

Metric = Literal["problems solved", "checkpoints solved", "pass rate", "mean reward"]
"""The figures a plan, a gate or a sequence can compare (closed set)."""


class Clusters(BaseModel):
    """A run's successes and attempts per cluster, for one figure."""

    track: str
    """`coding` or `web`."""
    metric: Metric
    """The figure."""
    unit: str
    """What a cluster is: `problems` or `templates`."""
    counts: dict[str, tuple[float, float]]
    """Per cluster: successes (numerator) and attempts (denominator)."""


class GateResult(BaseModel):
    """`report --fail-if-worse`: the verdict a CI job reads."""

    metric: Metric
    """The figure compared."""
    unit: str
    """The clusters resampled."""
    difference: Estimate
    """This run minus the baseline, paired, with the report's 95% interval."""
    worse_by: float
    """The tolerated loss (0-1)."""
    failed: bool
    """Whether the whole interval lies below -worse_by."""


def clusters_of(run_dir: Path, metric: Metric | None = None) -> Clusters:
    """The run's counts per cluster, as its track counts them (a scored folder of web agent
    logs, as `report --baseline` takes, counts as a web run)."""
    from benchwright.registry import TRACKS
    from benchwright.runs import open_run

    loose = not (run_dir / "manifest.json").exists() and (run_dir / "eval_summary.json").exists()
    track = TRACKS.get("web") if loose else open_run(run_dir).track
    counted = track.clusters(run_dir, metric)
    return Clusters(track=track.name, metric=counted.metric, unit=counted.unit,
                    counts=counted.counts)


def paired(run: Clusters, base: Clusters) -> tuple[tuple[list[float], list[float]],
                                                   tuple[list[float], list[float]]]:
    """Both runs' (numerators, denominators) over the clusters both have, in one order."""
    if run.track != base.track:
        raise UserInputError(f"a {run.track} run cannot be compared with a {base.track} run",
                             hint="give a baseline of the same track")
    shared = sorted(run.counts.keys() & base.counts.keys())
    ours = ([run.counts[k][0] for k in shared], [run.counts[k][1] for k in shared])
    theirs = ([base.counts[k][0] for k in shared], [base.counts[k][1] for k in shared])
    return ours, theirs


def gate(run_dir: Path, baseline: Path, worse_by_points: float,
         metric: Metric | None = None) -> GateResult:
    """Whether the run is worse than the baseline by more than `worse_by_points` with the
    report's confidence (the paired 95% bootstrap interval lies wholly below -D)."""
    if not 0 <= worse_by_points < 100:
        raise UserInputError(f"--fail-if-worse {worse_by_points:g} is outside 0-100 points",
                             hint="give the tolerated loss in points, e.g. --fail-if-worse 5")
    run, base = clusters_of(run_dir, metric), clusters_of(baseline, metric)
    ours, theirs = paired(run, base)
    if len(ours[0]) < MIN_CLUSTERS:
        raise UserInputError(
            f"{len(ours[0])} {run.unit} scored in both runs: the gate needs at least "
            f"{MIN_CLUSTERS} to decide", path=run_dir,
            hint=f"run at least {MIN_CLUSTERS} {run.unit} in both runs")
    difference = paired_difference_ci(ours, theirs)
    worse_by = worse_by_points / 100
    return GateResult(metric=run.metric, unit=run.unit, difference=difference,
                      worse_by=worse_by, failed=difference.high < -worse_by)


def gate_line(result: GateResult) -> str:
    """One line saying what the gate saw and decided."""
    d = result.difference
    seen = (f"{result.metric}: {100 * d.value:+.1f} points [{100 * d.low:+.1f}, "
            f"{100 * d.high:+.1f}] over {d.n_clusters} {result.unit}")
    if result.failed:
        return f"{seen}: worse by more than {100 * result.worse_by:g} points with 95% confidence"
    return f"{seen}: not shown worse by more than {100 * result.worse_by:g} points"


def enforce(result: GateResult) -> None:
    """Raise `RegressionFound` (exit 1) when the gate failed."""
    if result.failed:
        raise RegressionFound(gate_line(result), hint="the run is worse than its baseline")


def plan_from_run(baseline: Path, difference_points: float, power: float = 0.8,
                  alpha: float = 0.05, trials: list[int] | None = None,
                  metric: Metric | None = None) -> Plan:
    """The plan with the pass rate and between-cluster spread read from a finished run, and
    the smallest difference that run's own size could detect."""
    found = clusters_of(baseline, metric)
    nums = [c[0] for c in found.counts.values()]
    dens = [c[1] for c in found.counts.values()]
    population = population_of(nums, dens, f"{baseline} ({found.metric} per "
                                           f"{found.unit.rstrip('s')})")
    made = plan(population, difference_points / 100, power, alpha, *([trials] if trials else []))
    per_cluster = max(1, round(statistics.median(d for d in dens if d > 0)))
    return made.model_copy(update={
        "available": len(nums), "available_trials": per_cluster, "unit": found.unit,
        "mde": plan_mde(population, len(nums), per_cluster, power, alpha)})


def assumed_plan(pass_rate_points: float, spread_points: float, difference_points: float,
                 power: float = 0.8, alpha: float = 0.05, trials: list[int] | None = None) -> Plan:
    """The plan from an assumed pass rate and between-problem spread (both in points)."""
    from benchwright.stats.planning import Population

    if not 0 < pass_rate_points < 100 or not 0 <= spread_points < 50:
        raise UserInputError(f"--pass-rate {pass_rate_points:g} / --spread {spread_points:g} "
                             "out of range", hint="a pass rate in (0, 100) points and a "
                             "spread in [0, 50) points")
    population = Population(pass_rate=pass_rate_points / 100, spread=spread_points / 100,
                            source="assumed")
    return plan(population, difference_points / 100, power, alpha, *([trials] if trials else []))
