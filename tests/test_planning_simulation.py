"""The plan and the sequential looks, checked by simulation (issue 41): 2,000 seeded comparisons
each, drawn from the model the plan assumes and decided by the rule the report (or
`--until-decided`) applies."""

from __future__ import annotations

import numpy as np

from benchwright.stats.estimates import DEFAULT_SEED, MIN_CLUSTERS, _resample_counts
from benchwright.stats.planning import Population, plan, problem_rates, shifted
from benchwright.stats.sequential import SequenceSettings, decide, interval, look_alpha, paired_se

SIMS = 2_000
POPULATION = Population(pass_rate=0.45, spread=0.2, source="assumed")


def _bootstrap_excludes_zero(diffs: np.ndarray, resamples: int = 2_000) -> np.ndarray:
    """The report's verdict (paired percentile bootstrap, 95%) on each row of per-problem
    differences (equal trials on both sides: the ratio of sums is the mean difference)."""
    n = diffs.shape[1]
    counts = _resample_counts(n, resamples, DEFAULT_SEED)
    means = diffs @ counts.T / n
    low, high = np.quantile(means, [0.025, 0.975], axis=1)
    return np.asarray(((low > 0) | (high < 0)) & (n >= MIN_CLUSTERS))


def test_the_plans_sample_size_reaches_its_stated_power() -> None:
    rng = np.random.default_rng(41)
    rates = problem_rates(POPULATION)
    for difference, trials in [(0.15, 3), (0.10, 5)]:
        row = next(r for r in plan(POPULATION, difference, 0.8, trials=[trials]).rows)
        moved = shifted(rates, difference)
        pick = rng.integers(0, len(rates), size=(SIMS, row.problems))
        ours = rng.binomial(trials, moved[pick]) / trials
        theirs = rng.binomial(trials, rates[pick]) / trials
        achieved = float(_bootstrap_excludes_zero(ours - theirs).mean())
        print(f"plan: D={difference:.2f}, {trials} trials -> {row.problems} problems, "
              f"stated power {row.power:.3f}, simulated {achieved:.3f} over {SIMS} comparisons")
        assert abs(achieved - row.power) <= 0.03


def test_repeated_looks_under_no_difference_keep_the_level() -> None:
    rng = np.random.default_rng(4141)
    settings = SequenceSettings(baseline="base", metric="problems solved", alpha=0.05,
                                max_rounds=8)
    problems, base_trials = 12, 3
    rates = problem_rates(POPULATION)[rng.integers(0, 20_000, size=(SIMS, problems))]
    base = rng.binomial(base_trials, rates).astype(float)
    ours = np.zeros_like(base)
    declared = np.zeros(SIMS, bool)
    alpha = look_alpha(settings.alpha, settings.max_rounds)
    for round_ in range(1, settings.max_rounds + 1):
        ours += rng.binomial(1, rates)
        diff, se = paired_se(ours, np.full_like(ours, round_), base,
                             np.full_like(base, base_trials))
        for i in np.flatnonzero(~declared):
            low, high = interval(float(diff[i]), float(se[i]), problems, alpha)
            declared[i] = decide(low, high, None) == "difference"
    rate = float(declared.mean())
    print(f"until-decided: {settings.max_rounds} looks at alpha {settings.alpha}, no true "
          f"difference: a difference declared in {rate:.3f} of {SIMS} runs")
    assert rate <= settings.alpha + 0.01
