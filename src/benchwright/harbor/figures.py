"""A Harbor run's headline figure and its comparison with a baseline, as the other tracks report
theirs (docs/statistics.md): the mean `reward` of the trials, with a 95% bootstrap interval
that resamples tasks (a task's trials are alike, so the task is the cluster), and, given a
baseline run of the same tasks, the paired difference over the tasks both ran, with its
verdict.

Which trials count: a `completed` trial with its `reward` (a trial without that key counts 0,
as Harbor's mean counts a missing key); a `verifier_error` trial counts 0 (Harbor's failure of
the trial); an `infrastructure` trial is left out (the harness failed, not the agent).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from benchwright.stats.estimates import (
    MIN_CLUSTERS,
    Estimate,
    Verdict,
    few_clusters,
    judge,
    paired_difference_ci,
    ratio_ci,
    verdict_text,
)

if TYPE_CHECKING:
    from benchwright.harbor.trial import TrialRecord

METRIC = "mean reward"
UNIT = "tasks"


class BaselineComparison(BaseModel):
    """This run against a baseline run, paired over the tasks both ran."""

    baseline: Path
    """The baseline run folder."""
    tasks: int
    """Tasks counted in both runs."""
    run_mean: float
    """This run's mean reward over those tasks."""
    baseline_mean: float
    """The baseline's mean reward over those tasks."""
    difference: Estimate
    """This run minus the baseline, with a paired 95% interval resampling tasks."""
    verdict: Verdict
    """improvement, regression, no significant change, too few clusters."""


def reward_counts(records: Sequence[TrialRecord]) -> dict[str, tuple[float, float]]:
    """Per task: the summed reward and the trials counted (see the module's rules)."""
    counts: dict[str, tuple[float, float]] = {}
    for record in records:
        if record.status == "infrastructure":
            continue
        reward = (record.rewards or {}).get("reward", 0.0) if record.status == "completed" \
            else 0.0
        total, n = counts.get(record.task, (0.0, 0.0))
        counts[record.task] = (total + reward, n + 1)
    return counts


def mean_reward(counts: dict[str, tuple[float, float]]) -> Estimate | None:
    """The trials' mean reward, clustered by task; None when no trial counts."""
    if not counts:
        return None
    return ratio_ci([c[0] for c in counts.values()], [c[1] for c in counts.values()])


def compare(run: dict[str, tuple[float, float]], base: dict[str, tuple[float, float]],
            baseline: Path) -> BaselineComparison:
    """The paired comparison over the tasks both runs counted."""
    shared = sorted(run.keys() & base.keys())
    ours = ([run[k][0] for k in shared], [run[k][1] for k in shared])
    theirs = ([base[k][0] for k in shared], [base[k][1] for k in shared])
    difference = paired_difference_ci(ours, theirs)
    return BaselineComparison(
        baseline=baseline, tasks=len(shared), run_mean=_ratio(ours), baseline_mean=_ratio(theirs),
        difference=difference, verdict=judge(difference, "higher"))


def estimate_text(estimate: Estimate | None) -> str:
    """`0.625 [0.400, 0.850] over 8 tasks`, or unknown."""
    if estimate is None or estimate.n_clusters == 0:
        return "unknown (no trial counted)"
    text = (f"{estimate.value:.3f} [{estimate.low:.3f}, {estimate.high:.3f}] over "
            f"{estimate.n_clusters} {UNIT if estimate.n_clusters != 1 else 'task'}")
    if few_clusters(estimate):  # a bootstrap over a handful of tasks is not to be trusted
        text += f" (fewer than {MIN_CLUSTERS} {UNIT}: the interval is unreliable)"
    return text


def comparison_lines(comparison: BaselineComparison) -> list[str]:
    """The report's lines for a baseline comparison."""
    d = comparison.difference
    if comparison.tasks == 0:
        return [f"- baseline {comparison.baseline}: no task in common"]
    return [f"- baseline {comparison.baseline}: {comparison.baseline_mean:.3f} over the "
            f"{comparison.tasks} tasks both ran (this run: {comparison.run_mean:.3f})",
            f"- difference: {d.value:+.3f} [{d.low:+.3f}, {d.high:+.3f}] (paired, 95%): "
            + verdict_text(comparison.verdict, d.n_clusters, UNIT, d, points=False)]


def _ratio(pair: tuple[list[float], list[float]]) -> float:
    return sum(pair[0]) / sum(pair[1]) if sum(pair[1]) else float("nan")
