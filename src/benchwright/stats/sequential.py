"""Deciding a paired comparison in rounds, with looks after every round that keep their level
(docs/statistics.md, "Stopping when decided").

Alpha spending over a trial budget of M rounds: look j may spend alpha * j/M - alpha * (j-1)/M,
so the M looks together spend at most alpha. Each look asks whether the paired difference's
interval at level 1 - alpha_j excludes zero (a difference) or, with a margin, lies inside
(-margin, +margin) (no difference that matters). By the union bound the chance that any look
errs is at most the sum of the alpha_j: the level holds whatever the looks' correlation and
whenever the run stops (a cost or time budget that ends it early only leaves alpha unspent).

The interval is the report's paired, problem-clustered one in its closed form: the ratio of
sums linearised per problem, its standard error from the problems' spread, and Student's t with
n - 1 degrees of freedom (few problems widen it).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from benchwright.stats.estimates import MIN_CLUSTERS

if TYPE_CHECKING:
    import numpy as np

Decision = Literal["difference", "no difference", "undecided"]
"""What one look found (closed set)."""
StopReason = Literal["difference", "no difference", "trial budget spent", "cost budget spent",
                     "time budget spent"]
"""Why a sequence stopped (closed set)."""


class SequenceSettings(BaseModel):
    """What `--until-decided` was asked, fixed when the sequence starts."""

    baseline: str
    """The baseline run compared with."""
    metric: str
    """The figure compared (the report's name for it)."""
    unit: str = "problems"
    """What a cluster is: `problems` (coding) or `templates` (web: tasks of one intent
    template)."""
    alpha: float = 0.05
    """Total two-sided level over every look."""
    max_rounds: int
    """The trial budget: rounds of one trial per problem (the spending clock)."""
    margin: float | None = None
    """A difference smaller than this (0-1) does not matter: an interval inside +-margin
    stops the run as `no difference`. None: only a difference or the budget stops it."""
    max_cost_usd: float | None = None
    """Stop before a round once this much has been spent (None: no cost budget)."""
    max_seconds: float | None = None
    """Stop before a round once this much wall time has passed (None: no time budget)."""


class Look(BaseModel):
    """The comparison after one round."""

    round: int
    """The round just finished, from 1."""
    n_clusters: int
    """Clusters (problems, templates) paired."""
    difference: float | None
    """This run minus the baseline (0-1); None (unknown) below MIN_CLUSTERS problems."""
    low: float | None
    """The look's interval, at level 1 - alpha_spent (None below MIN_CLUSTERS problems)."""
    high: float | None
    """Its upper bound."""
    alpha_spent: float
    """The level this look used."""
    decision: Decision
    """What it found."""
    cost_usd: float | None = None
    """Spent by the run so far (None: unknown)."""
    elapsed_s: float = 0.0
    """Wall time since the sequence started, summed over sessions."""


class SequenceState(BaseModel):
    """`sequence.json` of an `--until-decided` run: its settings and every look, in order."""

    format: Literal["benchwright.sequence/1"] = "benchwright.sequence/1"
    """The file's format and version."""
    settings: SequenceSettings
    """Fixed at the start; a resumed sequence keeps them."""
    looks: list[Look] = Field(default_factory=list)
    """One per finished round."""
    stopped: StopReason | None = None
    """Why it stopped (None: still running, or interrupted)."""


def look_alpha(alpha: float, max_rounds: int) -> float:
    """The level one look spends: linear spending over equal rounds (alpha / M each)."""
    return alpha / max_rounds


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile (Cornish-Fisher expansion around the normal, so no scipy: against
    scipy.stats.t.ppf, within 2% at 5 degrees of freedom and 0.999, within 0.2% from 9)."""
    from statistics import NormalDist

    x = NormalDist().inv_cdf(p)
    terms = [(x ** 3 + x) / 4, (5 * x ** 5 + 16 * x ** 3 + 3 * x) / 96,
             (3 * x ** 7 + 19 * x ** 5 + 17 * x ** 3 - 15 * x) / 384]
    return float(x + sum(t / df ** (i + 1) for i, t in enumerate(terms)))


def paired_se(a_num: np.ndarray, a_den: np.ndarray, b_num: np.ndarray,
              b_den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ratio(a) - ratio(b) over clusters (the last axis) and its standard error, each ratio
    linearised per cluster (the delta method); works on one comparison or a stack of them."""
    import numpy as np  # imported when used: the CLI starts faster

    def linear(num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ratio = num.sum(-1) / den.sum(-1)
        return ratio, (num - ratio[..., None] * den) / den.mean(-1)[..., None]

    ra, ua = linear(a_num, a_den)
    rb, ub = linear(b_num, b_den)
    n = a_num.shape[-1]
    return ra - rb, np.asarray((ua - ub).std(-1, ddof=1) / math.sqrt(n))


def interval(difference: float, se: float, n: int, alpha: float) -> tuple[float, float]:
    """The two-sided interval at level 1 - alpha (t with n - 1 degrees of freedom)."""
    half = t_quantile(1 - alpha / 2, n - 1) * se
    return difference - half, difference + half


def _unanimous(difference: float, n: int, alpha: float) -> tuple[float, float]:
    """Every problem moved by the same amount: no spread, so no t interval. The exact sign
    test decides instead: n problems all moving one way have p = 2 / 2^n; past the look's level
    the interval is the point, else it reaches zero (not excluded)."""
    if difference == 0 or 2 * 0.5 ** n > alpha:
        return min(difference, 0.0), max(difference, 0.0)
    return difference, difference


def decide(low: float, high: float, margin: float | None) -> Decision:
    """A look's decision from its interval."""
    if low > 0 or high < 0:
        return "difference"
    if margin is not None and -margin < low and high < margin:
        return "no difference"
    return "undecided"


def look(settings: SequenceSettings, round_: int, a: tuple[list[float], list[float]],
         b: tuple[list[float], list[float]]) -> Look:
    """The look after `round_`: this run's (numerators, denominators) per problem against the
    baseline's, paired by position."""
    import numpy as np  # imported when used: the CLI starts faster

    n = len(a[0])
    alpha = look_alpha(settings.alpha, settings.max_rounds)
    if n < MIN_CLUSTERS or sum(a[1]) == 0 or sum(b[1]) == 0:
        return Look(round=round_, n_clusters=n, difference=None, low=None, high=None,
                    alpha_spent=alpha, decision="undecided")
    diff, se = paired_se(*(np.asarray(x, float) for x in (*a, *b)))
    low, high = interval(float(diff), float(se), n, alpha) if se > 0 else \
        _unanimous(float(diff), n, alpha)
    return Look(round=round_, n_clusters=n, difference=float(diff), low=low, high=high,
                alpha_spent=alpha, decision=decide(low, high, settings.margin))


def stop_reason(state: SequenceState, cost_usd: float | None,
                elapsed_s: float) -> StopReason | None:
    """Why the sequence stops now (None: run another round)."""
    settings, last = state.settings, state.looks[-1] if state.looks else None
    if last is not None and last.decision != "undecided":
        return last.decision
    if len(state.looks) >= settings.max_rounds:
        return "trial budget spent"
    if settings.max_cost_usd is not None and (cost_usd or 0.0) >= settings.max_cost_usd:
        return "cost budget spent"
    if settings.max_seconds is not None and elapsed_s >= settings.max_seconds:
        return "time budget spent"
    return None
