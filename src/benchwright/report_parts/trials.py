"""Several trials per problem (or web task): pass@k, pass^k and the spread across trials.

pass@k is the chance that at least one of k trials succeeds, pass^k that all k do; both are
estimated without bias from the n trials a problem has, c of them successful:
pass@k = 1 - C(n-c, k) / C(n, k) and pass^k = C(c, k) / C(n, k). The run's figure is their mean
over problems with at least k trials, with a bootstrap CI that resamples problems.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import mean, pstdev

from pydantic import BaseModel, Field

from benchwright.stats.estimates import Estimate, mean_ci, pass_at_k, pass_hat_k


class PassAtK(BaseModel):
    """pass@k and pass^k over the run for one k."""

    k: int
    """Trials drawn."""
    pass_at_k: Estimate
    """At least one of k succeeds; mean over clusters, CI resampling them."""
    pass_hat_k: Estimate
    """All k succeed."""


class ClusterTrials(BaseModel):
    """One problem's (or task's) trials."""

    name: str
    """The problem, or the web task's id."""
    outcomes: list[bool]
    """Success of each trial, by trial number."""
    pass_at: dict[int, float]
    """k -> pass@k, for k from 1 to the trials it has."""
    pass_hat: dict[int, float]
    """k -> pass^k."""


class TrialStats(BaseModel):
    """Everything about repeated trials."""

    success: str
    """What counts as a successful trial."""
    max_trials: int
    """The most trials any cluster has."""
    overall: list[PassAtK] = Field(default_factory=list)
    """pass@k and pass^k for k = 1 .. max_trials."""
    per_cluster: list[ClusterTrials] = Field(default_factory=list)
    """Per problem (or task)."""
    per_trial_rate: dict[int, float] = Field(default_factory=dict)
    """Trial number -> share of clusters whose trial of that number succeeded."""
    between_trial_std: float | None = None
    """Population std of the per-trial rates."""
    mean_within_std: float | None = None
    """Mean over clusters of the population std of their 0/1 outcomes."""


def trial_stats(outcomes: dict[str, list[bool]], success: str) -> TrialStats:
    """The figures of clusters with these per-trial outcomes (in trial order)."""
    rows = [_cluster(name, values) for name, values in outcomes.items() if values]
    top = max((len(r.outcomes) for r in rows), default=0)
    per_trial = {k + 1: mean(float(r.outcomes[k]) for r in rows if len(r.outcomes) > k)
                 for k in range(top)}
    return TrialStats(
        success=success, max_trials=top, per_cluster=rows,
        overall=[_overall(rows, k) for k in range(1, top + 1)], per_trial_rate=per_trial,
        between_trial_std=pstdev(per_trial.values()) if per_trial else None,
        mean_within_std=mean(pstdev(map(float, r.outcomes)) for r in rows) if rows else None)


def _cluster(name: str, values: list[bool]) -> ClusterTrials:
    n, c = len(values), sum(values)
    return ClusterTrials(name=name, outcomes=values,
                         pass_at={k: pass_at_k(n, c, k) for k in range(1, n + 1)},
                         pass_hat={k: pass_hat_k(n, c, k) for k in range(1, n + 1)})


def _overall(rows: list[ClusterTrials], k: int) -> PassAtK:
    at = [r.pass_at[k] for r in rows if k in r.pass_at]
    hat = [r.pass_hat[k] for r in rows if k in r.pass_hat]
    return PassAtK(k=k, pass_at_k=mean_ci(at), pass_hat_k=mean_ci(hat))


def fmt_rate(value: float) -> str:
    """`66.7%`, or `-` for NaN."""
    return "-" if math.isnan(value) else f"{100 * value:.1f}%"


def pass_k_lines(stats: TrialStats, unit: str, ci: Callable[[Estimate], str]) -> list[str]:
    """Markdown: the run's pass@k and pass^k table, then one row per `unit` (problem, task),
    each interval written by `ci` (the tracks write intervals each in their own way)."""
    top = stats.max_trials
    lines = ["| k | pass@k [95% CI] | pass^k (all k) [95% CI] |", "|---|---|---|"]
    lines += [f"| {p.k} | {ci(p.pass_at_k)} | {ci(p.pass_hat_k)} |" for p in stats.overall]
    lines += ["", f"| {unit} | outcomes | pass@1 | pass@{top} | pass^{top} |",
              "|---|---|---|---|---|"]
    lines += [f"| {c.name} | {''.join('✔' if o else '✘' for o in c.outcomes)} | "
              f"{fmt_rate(c.pass_at.get(1, math.nan))} | "
              f"{fmt_rate(c.pass_at.get(top, math.nan))} | "
              f"{fmt_rate(c.pass_hat.get(top, math.nan))} |" for c in stats.per_cluster]
    return lines
