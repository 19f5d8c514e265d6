"""How many problems and trials a paired comparison needs, and the smallest difference a finished
one could have detected (docs/statistics.md, "Planning").

The design is the report's: both runs attempt the same problems (clusters), each problem's rate
is its successes over its trials, and the verdict asks whether the paired difference's 95%
interval excludes zero. A problem's true rate p varies between problems (a Beta distribution of
mean `pass_rate` and standard deviation `spread`); the other run's rate is p shifted on the logit
scale so that the mean shift is the difference sought (a problem that is always or never solved
moves less than one in the middle). One problem's observed difference then varies by

    var = Var(q - p) + E[p(1 - p) + q(1 - q)] / k     (k trials per problem in each run)

and n problems give the mean difference a standard error of sqrt(var / n): n is the smallest
count at which D / se clears z(1 - alpha/2) + z(power).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from benchwright.errors import UserInputError
from benchwright.stats.estimates import MIN_CLUSTERS

if TYPE_CHECKING:
    import numpy as np

_DRAWS = 20_000
_SEED = 20261129
DEFAULT_TRIALS = (1, 2, 3, 5, 10)


class Population(BaseModel):
    """What the plan assumes of the problems: their mean rate and its spread between problems."""

    pass_rate: float
    """The baseline's mean rate (0-1)."""
    spread: float
    """The standard deviation of the problems' true rates (0-1), trial noise taken out."""
    source: str
    """Where the two came from: `assumed`, or the baseline run they were read from."""


class PlanRow(BaseModel):
    """One design: trials per problem, and the problems it needs."""

    trials: int
    """Trials per problem, in each run."""
    problems: int
    """Problems needed (at least MIN_CLUSTERS)."""
    power: float
    """The power those problems give (at least the power asked for)."""
    sd: float
    """Standard deviation of one problem's paired difference under this design."""


class Plan(BaseModel):
    """`benchwright plan --json`: sample sizes for a paired, problem-clustered comparison."""

    format: Literal["benchwright.plan/1"] = "benchwright.plan/1"
    """The file's format and version."""
    difference: float
    """The difference to detect (0-1, absolute)."""
    power: float
    """The chance of detecting it, asked for."""
    alpha: float
    """Two-sided level of the test (the report's intervals are 95%: 0.05)."""
    population: Population
    """The problems assumed."""
    rows: list[PlanRow]
    """One design per trial count."""
    unit: str = "problems"
    """What a cluster is: problems (coding) or templates (web: a row's trials are then the
    attempts per template)."""
    available: int | None = None
    """Clusters in the baseline, when the plan was read from one."""
    available_trials: int | None = None
    """The baseline's attempts per cluster (the median), when read from one."""
    mde: float | None = None
    """With the baseline's clusters and attempts: the smallest difference detected with this
    power."""


def population_of(successes: Sequence[float], trials: Sequence[float],
                  source: str) -> Population:
    """Mean rate and between-problem spread from per-problem counts (method of moments: the
    observed rates' variance minus the part trial noise explains)."""
    import numpy as np  # imported when used: the CLI starts faster

    num, den = np.asarray(successes, float), np.asarray(trials, float)
    keep = den > 0
    if keep.sum() < 2:
        raise UserInputError(f"{source} has {int(keep.sum())} problem(s) with trials: a "
                             "spread needs at least 2", hint="give --pass-rate and --spread")
    num, den = num[keep], den[keep]
    rates = num / den
    mean = float(num.sum() / den.sum())
    noise = float(np.mean(rates * (1 - rates) / np.maximum(den - 1, 1)))
    spread = math.sqrt(max(float(np.var(rates, ddof=1)) - noise, 0.0))
    return Population(pass_rate=mean, spread=spread, source=source)


def problem_rates(population: Population) -> np.ndarray:
    """A fixed draw of true problem rates from the Beta of this mean and spread."""
    import numpy as np  # imported when used: the CLI starts faster

    mean, spread = population.pass_rate, population.spread
    if not 0 < mean < 1 or spread <= 0:
        return np.full(_DRAWS, min(max(mean, 0.0), 1.0))
    variance = min(spread ** 2, 0.99 * mean * (1 - mean))  # a Beta's largest spread
    size = mean * (1 - mean) / variance - 1
    return np.random.default_rng(_SEED).beta(mean * size, (1 - mean) * size, _DRAWS)


def shifted(rates: np.ndarray, difference: float) -> np.ndarray:
    """The rates moved on the logit scale so that their mean moves by `difference`."""
    import numpy as np  # imported when used: the CLI starts faster

    clipped = np.clip(rates, 1e-9, 1 - 1e-9)
    logits = np.log(clipped / (1 - clipped))
    target = float(rates.mean()) + difference
    if not 0 < target < 1:
        raise UserInputError(f"a difference of {100 * difference:g} points from a rate of "
                             f"{100 * rates.mean():.1f}% leaves 0-100%",
                             hint="ask for a smaller --difference")
    low, high = -30.0, 30.0
    for _ in range(100):  # bisection on the shift: the mean is monotone in it
        mid = (low + high) / 2
        if float((1 / (1 + np.exp(-(logits + mid)))).mean()) < target:
            low = mid
        else:
            high = mid
    return np.asarray(1 / (1 + np.exp(-(logits + (low + high) / 2))))


def difference_sd(rates: np.ndarray, moved: np.ndarray, trials: int) -> float:
    """Standard deviation of one problem's observed paired difference with k trials a side."""
    noise = float((rates * (1 - rates) + moved * (1 - moved)).mean()) / trials
    return math.sqrt(float((moved - rates).var()) + noise)


def z(p: float) -> float:
    """The standard normal quantile."""
    return NormalDist().inv_cdf(p)


def power_of(problems: int, sd: float, difference: float, alpha: float) -> float:
    """Power of the two-sided test with this many problems (normal approximation)."""
    if sd == 0:
        return 1.0
    return NormalDist().cdf(abs(difference) * math.sqrt(problems) / sd - z(1 - alpha / 2))


def problems_needed(sd: float, difference: float, power: float, alpha: float) -> int:
    """The fewest problems giving this power, never under MIN_CLUSTERS."""
    needed = ((z(1 - alpha / 2) + z(power)) * sd / abs(difference)) ** 2
    return max(MIN_CLUSTERS, math.ceil(needed - 1e-9))


def plan(population: Population, difference: float, power: float = 0.8, alpha: float = 0.05,
         trials: Sequence[int] = DEFAULT_TRIALS) -> Plan:
    """Problems needed per trial count to detect `difference` (0-1) with this power."""
    _check(difference, power, alpha)
    rates = problem_rates(population)
    moved = shifted(rates, difference)
    rows = []
    for k in trials:
        sd = difference_sd(rates, moved, k)
        n = problems_needed(sd, difference, power, alpha)
        rows.append(PlanRow(trials=k, problems=n, power=power_of(n, sd, difference, alpha),
                            sd=sd))
    return Plan(difference=difference, power=power, alpha=alpha, population=population,
                rows=rows)


def plan_mde(population: Population, problems: int, trials: int, power: float = 0.8,
             alpha: float = 0.05) -> float:
    """The smallest difference `problems` problems with `trials` trials detect with `power`."""
    rates = problem_rates(population)
    reach = z(1 - alpha / 2) + z(power)
    guess = 0.0
    for _ in range(6):  # the spread depends a little on the difference: iterate to a fixed point
        moved = shifted(rates, min(guess, 0.99 - float(rates.mean())))
        guess = reach * difference_sd(rates, moved, trials) / math.sqrt(problems)
    return guess


def _check(difference: float, power: float, alpha: float) -> None:
    if not 0 < abs(difference) < 1:
        raise UserInputError(f"--difference {100 * difference:g} points is outside 0-100",
                             hint="give the difference in points, e.g. --difference 10")
    if not 0.5 <= power < 1 or not 0 < alpha < 0.5:
        raise UserInputError(f"power {power:g} / alpha {alpha:g} out of range",
                             hint="use a power in [0.5, 1) and an alpha in (0, 0.5)")

