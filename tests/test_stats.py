"""Bootstrap intervals agree with scipy.stats.bootstrap on fixed data."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from benchwright.stats.estimates import mean_ci, paired_difference_ci, ratio_ci

DATA = [0.0, 0.25, 0.5, 0.5, 0.75, 1.0, 1.0, 1.0, 0.2, 0.4, 0.6, 0.9]


def test_mean_ci_matches_scipy_percentile_bootstrap() -> None:
    ours = mean_ci(DATA, resamples=40_000)
    theirs = scipy_stats.bootstrap((np.array(DATA),), np.mean, method="percentile",
                                   n_resamples=40_000, random_state=1).confidence_interval
    assert ours.value == pytest.approx(np.mean(DATA))
    assert ours.low == pytest.approx(theirs.low, abs=0.01)
    assert ours.high == pytest.approx(theirs.high, abs=0.01)


def test_ratio_ci_matches_scipy_on_a_ratio_of_sums() -> None:
    solved = np.array([3, 1, 4, 0, 2, 5, 1, 3], float)
    total = np.array([4, 4, 5, 3, 4, 6, 2, 5], float)

    def ratio(idx: np.ndarray, axis: int = -1) -> np.ndarray:
        i = idx.astype(int)
        return np.asarray(solved[i].sum(axis=axis) / total[i].sum(axis=axis))

    theirs = scipy_stats.bootstrap((np.arange(8.0),), ratio, method="percentile",
                                   n_resamples=40_000, random_state=2).confidence_interval
    ours = ratio_ci(solved, total, resamples=40_000)
    assert ours.value == pytest.approx(19 / 33)
    assert ours.low == pytest.approx(theirs.low, abs=0.01)
    assert ours.high == pytest.approx(theirs.high, abs=0.01)


def test_hand_computed_and_degenerate_cases() -> None:
    single = ratio_ci([3], [4])
    assert (single.value, single.low, single.high) == (0.75, 0.75, 0.75)
    assert np.isnan(ratio_ci([], []).value)
    same = paired_difference_ci(([1, 2], [2, 2]), ([1, 2], [2, 2]))
    assert (same.value, same.low, same.high) == (0.0, 0.0, 0.0)
    ones = [1] * 6
    worse = paired_difference_ci(([0, 0, 0, 0, 1, 1], ones), (ones, ones))
    assert worse.value == pytest.approx(-2 / 3) and worse.high < 0


def test_reports_are_reproducible() -> None:
    assert mean_ci(DATA) == mean_ci(DATA)


def test_intervals_are_those_of_the_drawn_resamples() -> None:
    """Many distinct clusters: the draw counts times the values give exactly the sums of the
    drawn clusters."""
    rng = np.random.default_rng(7)
    solved, total = rng.random(60), rng.integers(1, 4, 60).astype(float)
    drawn = np.random.default_rng(11).integers(0, 60, size=(2_000, 60))
    direct = np.quantile(solved[drawn].sum(axis=1) / total[drawn].sum(axis=1), [0.025, 0.975])
    ours = ratio_ci(solved, total, resamples=2_000, seed=11)
    assert ours.low == pytest.approx(direct[0], rel=1e-12)
    assert ours.high == pytest.approx(direct[1], rel=1e-12)


def test_few_distinct_clusters_are_drawn_as_a_multinomial_with_the_same_interval() -> None:
    """600 single-trial tasks (pass or fail): drawing how many passing and failing tasks a
    resample holds gives the interval the per-task draw (scipy's) gives."""
    passed = np.array([1.0] * 370 + [0.0] * 230)

    def rate(idx: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(passed[idx.astype(int)].mean(axis=axis))

    theirs = scipy_stats.bootstrap((np.arange(600.0),), rate, method="percentile",
                                   n_resamples=20_000, random_state=3).confidence_interval
    ours = ratio_ci(passed, np.ones(600), resamples=40_000)
    assert ours.value == pytest.approx(370 / 600)
    assert ours.low == pytest.approx(theirs.low, abs=0.003)
    assert ours.high == pytest.approx(theirs.high, abs=0.003)


def test_paired_few_distinct_clusters_match_the_per_cluster_draw() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 2, 300).astype(float), rng.integers(0, 2, 300).astype(float)
    ones = np.ones(300)
    drawn = np.random.default_rng(9).integers(0, 300, size=(40_000, 300))
    direct = np.quantile(a[drawn].mean(axis=1) - b[drawn].mean(axis=1), [0.025, 0.975])
    ours = paired_difference_ci((a, ones), (b, ones), resamples=40_000)
    assert ours.value == pytest.approx(a.mean() - b.mean())
    assert ours.low == pytest.approx(direct[0], abs=0.005)
    assert ours.high == pytest.approx(direct[1], abs=0.005)


def test_pass_at_k_and_pass_hat_k_by_hand() -> None:
    from benchwright.stats.estimates import pass_at_k, pass_hat_k

    assert pass_at_k(3, 1, 1) == pytest.approx(1 / 3)
    assert pass_at_k(3, 1, 2) == pytest.approx(1 - 1 / 3)  # 1 - C(2,2)/C(3,2)
    assert pass_at_k(5, 0, 3) == 0.0 and pass_at_k(5, 3, 3) == 1.0
    assert pass_hat_k(3, 2, 2) == pytest.approx(1 / 3)  # C(2,2)/C(3,2)
    assert pass_hat_k(4, 3, 3) == pytest.approx(1 / 4) and pass_hat_k(4, 2, 3) == 0.0
    assert np.isnan(pass_at_k(2, 1, 3)) and np.isnan(pass_hat_k(2, 1, 3))


def test_verdicts_need_enough_clusters_and_a_direction() -> None:
    from benchwright.stats.estimates import MIN_CLUSTERS, judge

    ones = [1.0] * MIN_CLUSTERS
    drop = paired_difference_ci(([0.0] * MIN_CLUSTERS, ones), (ones, ones))
    assert judge(drop, "higher") == "regression" and judge(drop, "lower") == "improvement"
    assert judge(drop, "none") == "no preferred direction"
    one = paired_difference_ci(([0.0], [1.0]), ([1.0], [1.0]))
    assert (one.low, one.high) == (-1.0, -1.0) and judge(one, "higher") == "too few clusters"
    fewer = paired_difference_ci(([0.0] * (MIN_CLUSTERS - 1), ones[1:]), (ones[1:], ones[1:]))
    assert judge(fewer, "higher") == "too few clusters"
