"""Statistics for reports: cluster bootstrap confidence intervals and paired differences.

Clusters are the units that are resampled (problems for the coding track): each contributes a
numerator and a denominator, and the statistic is a ratio of sums, so a problem with more
checkpoints weighs more, as it does in the point estimate. Percentile intervals; a fixed seed
makes every report reproducible.

A resample's sums depend only on how many clusters of each distinct value tuple it draws, and
drawing n clusters uniformly with replacement draws Multinomial(n, sizes / n) of the k distinct
tuples: the same distribution as the per-cluster draw, at a cost of resamples x k instead of
resamples x n. Single-trial pass rates have k = 2 or 3, so most intervals of a report are drawn
that way; when most clusters are distinct (k > n / 6) the per-cluster draw is cheaper and used.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from benchwright.errors import UserInputError

if TYPE_CHECKING:
    import numpy as np

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 20261122
MIN_CLUSTERS = 6
"""Fewer clusters than this: intervals are marked as unreliable and no comparison gets a
verdict. When every one of n paired problems moves the same way, every bootstrap resample
does too, so the percentile interval excludes zero for any n, even n = 1. An exact two-sided
sign test on those n problems gives p = 2 / 2^n: 0.0625 at n = 5, 0.031 at n = 6, so 6 is the
fewest problems at which such a unanimous change can be told from chance at the 5% level
(docs/runs.md)."""

Direction = Literal["higher", "lower", "none"]
"""Which way a metric is better: a higher solve rate, a lower cost; `none` for a share such
as "problems partial", which rises both when solved problems slip and when failed ones gain."""
Verdict = Literal["regression", "improvement", "no significant change", "too few clusters",
                  "no preferred direction"]
"""A comparison's verdict (closed set)."""


class Estimate(BaseModel):
    """A point estimate with its confidence interval."""

    value: float
    """The estimate on the data as observed."""
    low: float
    """Lower bound of the interval."""
    high: float
    """Upper bound of the interval."""
    n_clusters: int
    """Clusters (problems) behind it."""
    confidence: float = 0.95
    """The interval's confidence level."""


def ratio_ci(numerators: Sequence[float], denominators: Sequence[float],
             confidence: float = 0.95, resamples: int = DEFAULT_RESAMPLES,
             seed: int = DEFAULT_SEED) -> Estimate:
    """sum(num) / sum(den), with a bootstrap interval that resamples clusters."""
    import numpy as np  # imported when used: the CLI starts faster

    num, den = np.asarray(numerators, float), np.asarray(denominators, float)
    if len(num) == 0 or den.sum() == 0:
        return Estimate(value=float("nan"), low=float("nan"), high=float("nan"), n_clusters=0,
                        confidence=confidence)
    point, n = float(num.sum() / den.sum()), len(num)
    counts, (num, den) = _draws([num, den], resamples, seed)
    sums = counts @ den
    stats = np.divide(counts @ num, sums, out=np.full(resamples, np.nan), where=sums > 0)
    return _estimate(point, stats, n, confidence)


def proportion_ci(numerators: Sequence[float], denominators: Sequence[float],
                  what: str = "a rate") -> Estimate:
    """A rate of successes over trials (`ratio_ci`), refused when a cluster has more successes
    than trials or fewer than none: no figure over 100% or under 0% is ever printed."""
    for num, den in zip(numerators, denominators, strict=True):
        if not 0 <= num <= den:
            raise UserInputError(f"{what} would be {num:g} of {den:g}: the run's records "
                                 "contradict each other", hint="the run folder was changed by "
                                 "hand; restore it or start a new run")
    return ratio_ci(numerators, denominators)


def mean_ci(values: Sequence[float], confidence: float = 0.95,
            resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> Estimate:
    """The mean of per-cluster values, with a bootstrap interval."""
    return ratio_ci(values, [1.0] * len(values), confidence, resamples, seed)


def paired_difference_ci(
    a: tuple[Sequence[float], Sequence[float]], b: tuple[Sequence[float], Sequence[float]],
    confidence: float = 0.95, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
) -> Estimate:
    """ratio(a) - ratio(b) over the same clusters, resampled together (a paired comparison)."""
    import numpy as np  # imported when used: the CLI starts faster

    a_num, a_den = (np.asarray(x, float) for x in a)
    b_num, b_den = (np.asarray(x, float) for x in b)
    if len(a_num) == 0 or a_den.sum() == 0 or b_den.sum() == 0:
        return Estimate(value=float("nan"), low=float("nan"), high=float("nan"), n_clusters=0,
                        confidence=confidence)
    point = float(a_num.sum() / a_den.sum() - b_num.sum() / b_den.sum())
    n = len(a_num)
    counts, (a_num, a_den, b_num, b_den) = _draws([a_num, a_den, b_num, b_den], resamples, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        stats = counts @ a_num / (counts @ a_den) - counts @ b_num / (counts @ b_den)
    return _estimate(point, stats, n, confidence)


def _draws(columns: list[np.ndarray], resamples: int,
           seed: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """The bootstrap's draw counts (resamples x groups) and each column's value per group: one
    group per distinct row of the columns when there are few (module docstring), else one per
    cluster."""
    import numpy as np  # imported when used: the CLI starts faster

    n = len(columns[0])
    rows, sizes = np.unique(np.column_stack(columns), axis=0, return_counts=True)
    if len(rows) * 6 > n:
        return _resample_counts(n, resamples, seed), columns
    counts = _grouped_counts(tuple(int(s) for s in sizes), resamples, seed)
    return counts, [rows[:, j] for j in range(len(columns))]


@functools.lru_cache(maxsize=16)
def _grouped_counts(sizes: tuple[int, ...], resamples: int, seed: int) -> np.ndarray:
    """How many clusters of each group (of these sizes) each resample draws, read-only."""
    import numpy as np  # imported when used: the CLI starts faster

    n = sum(sizes)
    counts = np.random.default_rng(seed).multinomial(n, np.asarray(sizes) / n, size=resamples)
    counts = counts.astype(float)
    counts.flags.writeable = False
    return counts


@functools.lru_cache(maxsize=4)
def _resample_counts(n: int, resamples: int, seed: int) -> np.ndarray:
    """How often each of the n clusters is drawn in each resample, read-only. A resample's sum
    is then one matrix-vector product (BLAS) instead of a gather of n values and their sum; the
    same draw serves every call with these sizes (a report asks for it many times)."""
    import numpy as np  # imported when used: the CLI starts faster

    idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    idx += np.arange(resamples)[:, None] * n
    counts = np.bincount(idx.ravel(), minlength=resamples * n).reshape(resamples, n)
    counts = counts.astype(float)
    counts.flags.writeable = False
    return counts


def _estimate(point: float, stats: np.ndarray, n: int, confidence: float) -> Estimate:
    import numpy as np  # imported when used: the CLI starts faster

    alpha = (1 - confidence) / 2
    low, high = np.nanquantile(stats, [alpha, 1 - alpha])
    return Estimate(value=point, low=float(low), high=float(high), n_clusters=n,
                    confidence=confidence)


def few_clusters(estimate: Estimate, minimum: int = MIN_CLUSTERS) -> bool:
    """Whether the interval rests on too few clusters to be trusted."""
    return 0 < estimate.n_clusters < minimum


def judge(difference: Estimate, better: Direction, minimum: int = MIN_CLUSTERS) -> Verdict:
    """A paired difference's verdict: regression or improvement only with at least `minimum`
    clusters and an interval that excludes zero, in the metric's good direction."""
    if math.isnan(difference.value) or difference.n_clusters < minimum:
        return "too few clusters"
    if not (difference.high < 0 or difference.low > 0):
        return "no significant change"
    if better == "none":
        return "no preferred direction"
    up = difference.low > 0
    return "improvement" if up == (better == "higher") else "regression"


def verdict_text(verdict: str, n_clusters: int, unit: str = "problems",
                 difference: Estimate | None = None, points: bool = True) -> str:
    """How a verdict (of any closed set holding `too few clusters`) reads in a report: `too few
    problems to tell (n=1)` for a small sample; `no significant change` with the smallest
    difference the comparison could have detected (`mde`) when `difference` is given (in
    points when `points`, else in the figure's own unit)."""
    if verdict == "too few clusters":
        return f"too few {unit} to tell (n={n_clusters})"
    if verdict == "no significant change" and difference is not None:
        smallest = mde(difference)
        if smallest is not None:
            size = f"{100 * smallest:.1f} points" if points else f"{smallest:.4g}"
            return f"{verdict} (could detect +-{size} at {MDE_POWER:.0%} power)"
    return verdict


MDE_POWER = 0.8
"""The power a minimum detectable difference is quoted at."""


def mde(difference: Estimate, power: float = MDE_POWER) -> float | None:
    """The smallest difference a finished comparison could have detected with `power`: the
    interval's half-width read as z(1 - alpha/2) standard errors, times z(1 - alpha/2) +
    z(power). None when the interval is unknown, or has no width (every problem moved alike:
    the spread, and so the smallest detectable difference, is unknown, not 0)."""
    from statistics import NormalDist

    if math.isnan(difference.low) or math.isnan(difference.high) \
            or difference.high <= difference.low:
        return None
    half = NormalDist().inv_cdf(1 - (1 - difference.confidence) / 2)
    se = (difference.high - difference.low) / (2 * half)
    return se * (half + NormalDist().inv_cdf(power))


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of P(at least one of k trials succeeds) from n trials, c of which
    succeeded: 1 - C(n-c, k) / C(n, k). NaN when k > n."""
    if k > n or k < 1:
        return math.nan
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of P(all of k trials succeed): C(c, k) / C(n, k). NaN when k > n."""
    if k > n or k < 1:
        return math.nan
    return math.comb(c, k) / math.comb(n, k)


def gini(values: Sequence[float]) -> float:
    """Concentration of non-negative values: 0 when all equal, towards 1 when one holds all."""
    import numpy as np  # imported when used: the CLI starts faster

    data = np.sort(np.asarray(values, float))
    n = len(data)
    if n == 0 or data.sum() == 0:
        return 0.0
    ranks = np.arange(1, n + 1)
    return float((2 * (ranks * data).sum()) / (n * data.sum()) - (n + 1) / n)
