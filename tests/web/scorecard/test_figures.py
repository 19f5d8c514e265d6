"""Report figures against hand-computed values and scipy's bootstrap."""

from __future__ import annotations

import json
import math
import statistics

import numpy as np
import pytest
from scipy import stats as scipy_stats

from benchwright.web.evaluation.evaluator import EvalStatus, EvaluatorIdentity
from benchwright.web.evaluation.scoring import TaskMetrics, TaskRow, WebEvalSummary, compute_totals
from benchwright.web.evaluation.tasks import TaskType, Unpassable, unpassable_flag
from benchwright.web.scorecard.figures import (
    build_report,
    compare,
    macro_average,
    render_markdown,
    task_scores,
)

IDENTITY = EvaluatorIdentity(version="1.2.3", evaluator_checksum="e" * 64, data_checksum="d" * 64)
# task id -> (template, sites, score, agent status)
FIXTURE = {
    1: (10, ["shopping"], 1.0, "SUCCESS"), 2: (10, ["shopping"], 0.0, "NOT_FOUND_ERROR"),
    3: (10, ["shopping"], 1.0, "SUCCESS"), 4: (20, ["reddit"], 0.0, "SUCCESS"),
    5: (20, ["reddit"], 0.0, "(missing)"), 6: (30, ["gitlab", "reddit"], 1.0, "SUCCESS"),
    7: (40, ["shopping"], 1.0, "SUCCESS"), 319: (40, ["shopping"], 0.0, "SUCCESS"),
}


def _row(task_id: int, template: int, sites: list[str], score: float, agent: str = "SUCCESS",
         trial: int = 1, metrics: TaskMetrics | None = None) -> TaskRow:
    status = EvalStatus.SUCCESS if score == 1.0 else EvalStatus.FAILURE
    if agent == "(missing)":
        status = EvalStatus.ERROR
    return TaskRow(task_id=task_id, trial=trial, score=score, status=status, sites=sites,
                   intent_template_id=template, task_type=TaskType.RETRIEVE,
                   unpassable=unpassable_flag(task_id), agent_status=agent, metrics=metrics,
                   error_origin="layout" if status is EvalStatus.ERROR else None)


def _summary(rows: list[TaskRow], name: str = "run") -> WebEvalSummary:
    return WebEvalSummary(output_dir=name, scored_at="2026-01-01T00:00:00+00:00",
                          evaluator=IDENTITY, site_urls={}, tasks=rows,
                          totals=compute_totals(rows))


def _fixture_rows() -> list[TaskRow]:
    metrics = {1: TaskMetrics(steps=10, cost_usd=0.5, tokens=1000),
               2: TaskMetrics(steps=20, duration_s=12.0)}
    return [_row(i, t, s, sc, a, metrics=metrics.get(i)) for i, (t, s, sc, a) in FIXTURE.items()]


def test_hand_computed_figures() -> None:
    report = build_report(_summary(_fixture_rows()))
    assert report.overall.value == pytest.approx(4 / 8)
    assert report.macro.value == pytest.approx((2 / 3 + 0 + 1 + 0.5) / 4)
    assert report.macro.n_clusters == 4
    sites = {s.site: s for s in report.per_site}
    assert sites["shopping"].pass_rate.value == pytest.approx(3 / 5)
    assert sites["reddit"].pass_rate.value == pytest.approx(1 / 3)
    assert (sites["gitlab"].n_tasks, sites["gitlab"].pass_rate.value) == (1, 1.0)
    assert sites["shopping"].avg_steps == 15 and sites["shopping"].avg_cost_usd == 0.5
    assert sites["shopping"].avg_tokens == 1000 and sites["shopping"].avg_duration_s == 12.0
    assert sites["reddit"].avg_steps is None


def test_unpassable_tasks_counted_with_and_without() -> None:
    view = build_report(_summary(_fixture_rows())).unpassable
    assert [(t.task_id, t.flag) for t in view.flagged] == [(319, Unpassable.KNOWN)]
    assert view.pass_rate_all.value == pytest.approx(4 / 8)
    assert view.pass_rate_excluding.value == pytest.approx(4 / 7)
    assert view.macro_excluding.value == pytest.approx((2 / 3 + 0 + 1 + 1) / 4)
    totals = compute_totals(_fixture_rows())
    assert totals.pass_rate_excluding_unpassable == pytest.approx(4 / 7)
    assert totals.n_unpassable_tasks == 1


def test_failure_modes_count_agent_and_evaluator_statuses() -> None:
    modes = build_report(_summary(_fixture_rows())).failure_modes
    assert modes.agent_status == {"SUCCESS": 6, "NOT_FOUND_ERROR": 1, "(missing)": 1}
    assert modes.evaluator_status == {"failure": 3, "success": 4, "error": 1}
    assert modes.error_origin == {"layout": 1}


def _many_rows() -> list[TaskRow]:
    rng = np.random.default_rng(7)
    return [_row(i, 100 + i % 13, ["shopping" if i % 3 else "gitlab"],
                 float(rng.random() < 0.3 + 0.04 * (i % 13))) for i in range(60)]


def test_macro_ci_matches_scipy_resampling_templates() -> None:
    rows = _many_rows()
    tasks = task_scores(rows)
    by_template: dict[int, list[float]] = {}
    for t in tasks:
        by_template.setdefault(t.intent_template_id, []).append(t.mean)
    means = np.array([statistics.mean(v) for _, v in sorted(by_template.items())])
    ours = macro_average(tasks)
    theirs = scipy_stats.bootstrap((means,), np.mean, method="percentile", n_resamples=40_000,
                                   random_state=3).confidence_interval
    assert ours.value == pytest.approx(means.mean()) and ours.n_clusters == 13
    assert ours.low == pytest.approx(theirs.low, abs=0.02)
    assert ours.high == pytest.approx(theirs.high, abs=0.02)


def test_pass_rate_ci_matches_scipy_resampling_tasks() -> None:
    rows = _many_rows()
    scores = np.array([r.score for r in rows if "shopping" in r.sites])
    site = {s.site: s for s in build_report(_summary(rows)).per_site}["shopping"]
    theirs = scipy_stats.bootstrap((scores,), np.mean, method="percentile", n_resamples=40_000,
                                   random_state=4).confidence_interval
    assert site.pass_rate.value == pytest.approx(scores.mean())
    assert site.pass_rate.low == pytest.approx(theirs.low, abs=0.02)
    assert site.pass_rate.high == pytest.approx(theirs.high, abs=0.02)


def test_variance_across_trials() -> None:
    rows = [_row(1, 10, ["shopping"], s, trial=k) for k, s in enumerate([1.0, 0.0, 1.0], 1)]
    rows += [_row(2, 10, ["shopping"], 1.0, trial=k) for k in (1, 2, 3)]
    rows.append(_row(3, 20, ["shopping"], 0.0))
    report = build_report(_summary(rows))
    trials = report.trials
    assert (trials.n_tasks_with_trials, trials.max_trials) == (2, 3)
    assert trials.per_trial_pass_rate == pytest.approx({1: 2 / 3, 2: 0.5, 3: 1.0})
    assert trials.between_trial_std == pytest.approx(statistics.pstdev([2 / 3, 0.5, 1.0]))
    assert trials.mean_within_task_std == pytest.approx(statistics.pstdev([1, 0, 1]) / 2)
    assert (trials.pass_all_trials, trials.pass_any_trial) == (0.5, 1.0)
    assert report.overall.value == pytest.approx(5 / 7)
    assert report.macro.value == pytest.approx(((2 / 3 + 1) / 2 + 0) / 2)


def test_paired_comparison_flags_regressions_only_when_the_ci_excludes_zero() -> None:
    base = [_row(i, i, ["shopping"], 1.0) for i in range(20)]
    worse = [_row(i, i, ["shopping"], 0.0 if i < 10 else 1.0) for i in range(20)]
    one_off = [_row(i, i, ["shopping"], 0.0 if i == 0 else 1.0) for i in range(21)]
    better = [_row(i, i, ["shopping"], 1.0) for i in range(20)]
    regression = compare(_summary(worse), _summary(base, "base"))
    assert regression.verdict == "regression" and regression.difference.value == -0.5
    assert [c.task_id for c in regression.regressed] == list(range(10))
    small = compare(_summary(one_off), _summary(base, "base"))
    assert small.verdict == "no significant change"
    assert (small.n_paired, small.only_current, small.only_baseline) == (20, [20], [])
    improvement = compare(_summary(better), _summary(worse, "base"))
    assert improvement.verdict == "improvement" and improvement.difference.low > 0
    assert improvement.baseline_pass_rate == 0.5 and improvement.current_pass_rate == 1.0


def test_markdown_and_json_renderings() -> None:
    report = build_report(_summary(_fixture_rows()), _summary(_fixture_rows(), "base"))
    text = render_markdown(report)
    for needle in ("## Per site", "| shopping | 5 | 60.0%", "template macro average: 54.2%",
                   "## Failure modes", "319 (known)", "## Against the baseline",
                   "no significant change"):
        assert needle in text
    data = json.loads(report.model_dump_json())
    assert data["format"] == "benchwright.web-report/2"
    assert data["macro"]["value"] == pytest.approx(0.5416666)
    empty = build_report(_summary([_row(319, 1, ["shopping"], 0.0)]))
    assert math.isnan(empty.unpassable.pass_rate_excluding.value)
    assert "-" in render_markdown(empty)


def test_few_paired_tasks_get_no_verdict() -> None:
    base = [_row(i, i, ["shopping"], 1.0) for i in range(5)]
    worse = [_row(i, i, ["shopping"], 0.0) for i in range(5)]
    few = compare(_summary(worse), _summary(base, "base"))
    assert few.difference.value == -1.0 and few.verdict == "too few clusters"
    assert "fewer than 6 tasks (or templates) behind the interval" in render_markdown(
        build_report(_summary(worse)))
    assert "too few tasks to tell (n=5)" in render_markdown(
        build_report(_summary(worse), _summary(base, "base")))
    six = compare(_summary([*worse, _row(5, 5, ["shopping"], 0.0)]),
                  _summary([*base, _row(5, 5, ["shopping"], 1.0)], "base"))
    assert six.verdict == "regression"
