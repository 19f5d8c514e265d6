"""The plan, the gate and the looks on hand-made data (issue 41): the web track clustered by
template, the sign test for a unanimous change, the margin, the budgets, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy import stats as scipy_stats

from benchwright.api.decisions import clusters_of, gate, plan_from_run
from benchwright.errors import UserInputError
from benchwright.stats.estimates import Estimate, mde, verdict_text
from benchwright.stats.sequential import (
    Look,
    SequenceSettings,
    SequenceState,
    look,
    stop_reason,
    t_quantile,
)
from benchwright.web.evaluation.evaluator import EvalStatus, EvaluatorIdentity
from benchwright.web.evaluation.scoring import TaskRow, WebEvalSummary, compute_totals
from benchwright.web.evaluation.tasks import TaskType

IDENTITY = EvaluatorIdentity(version="1", evaluator_checksum="e" * 64, data_checksum="d" * 64)
SETTINGS = SequenceSettings(baseline="base", metric="problems solved", max_rounds=3)


def _scored(folder: Path, passed: set[int]) -> Path:
    """A scored web folder: 8 templates of 3 tasks each (task 10 * template + i)."""
    rows = [TaskRow(task_id=10 * t + i, trial=1, score=1.0 if 10 * t + i in passed else 0.0,
                    status=EvalStatus.SUCCESS if 10 * t + i in passed else EvalStatus.FAILURE,
                    sites=["shopping"], intent_template_id=t, task_type=TaskType.RETRIEVE,
                    unpassable=None, agent_status="SUCCESS")
            for t in range(1, 9) for i in range(3)]
    summary = WebEvalSummary(output_dir=str(folder), scored_at="2026-11-29T00:00:00+00:00",
                             evaluator=IDENTITY, site_urls={}, tasks=rows,
                             totals=compute_totals(rows))
    folder.mkdir()
    (folder / "eval_summary.json").write_text(summary.model_dump_json())
    return folder


def test_web_runs_are_clustered_by_template_for_the_gate_and_the_plan(tmp_path: Path) -> None:
    base = _scored(tmp_path / "base", {10 * t + i for t in range(1, 9) for i in range(2)})
    worse = _scored(tmp_path / "worse", {10 * t for t in range(1, 9)})
    equal = _scored(tmp_path / "equal", {10 * t + i for t in range(1, 9) for i in range(2)})
    found = clusters_of(base)
    assert found.unit == "templates" and len(found.counts) == 8
    assert found.counts["1"] == (2.0, 3.0)
    failed = gate(worse, base, 5)
    assert failed.failed and failed.difference.value == pytest.approx(-1 / 3)
    assert failed.difference.n_clusters == 8
    assert not gate(equal, base, 5).failed
    plan = plan_from_run(base, -20)
    assert plan.unit == "templates" and plan.available == 8 and plan.available_trials == 3
    assert plan.population.pass_rate == pytest.approx(2 / 3)


def test_the_gate_refuses_what_it_cannot_decide(tmp_path: Path) -> None:
    base = _scored(tmp_path / "base", set())
    with pytest.raises(UserInputError, match="outside 0-100"):
        gate(base, base, 120)
    with pytest.raises(UserInputError, match="a web run has no"):
        clusters_of(base, "problems solved")


def test_a_unanimous_change_is_decided_by_the_sign_test() -> None:
    six = look(SETTINGS, 1, ([0.0] * 6, [1.0] * 6), ([1.0] * 6, [1.0] * 6))
    eight = look(SETTINGS, 1, ([0.0] * 8, [1.0] * 8), ([1.0] * 8, [1.0] * 8))
    assert six.decision == "undecided"  # p = 2 / 64 = 0.031 > 0.05 / 3
    assert (six.low, six.high) == (-1.0, 0.0)
    assert eight.decision == "difference"  # p = 2 / 256 = 0.0078
    five = look(SETTINGS, 1, ([0.0] * 5, [1.0] * 5), ([1.0] * 5, [1.0] * 5))
    assert five.decision == "undecided" and five.difference is None


def test_a_margin_stops_on_no_difference_and_budgets_stop_the_rest() -> None:
    a = ([3.0, 2.0, 3.0, 2.0, 3.0, 2.0, 3.0, 2.0], [3.0] * 8)
    b = ([2.0, 3.0, 3.0, 2.0, 2.0, 3.0, 3.0, 2.0], [3.0] * 8)
    wide = look(SETTINGS.model_copy(update={"margin": 0.5}), 1, a, b)
    assert wide.decision == "no difference"
    assert look(SETTINGS, 1, a, b).decision == "undecided"
    undecided = Look(round=1, n_clusters=8, difference=0.0, low=-0.1, high=0.1,
                     alpha_spent=0.05 / 3, decision="undecided")
    state = SequenceState(settings=SETTINGS.model_copy(update={"max_cost_usd": 1.0,
                                                               "max_seconds": 60.0}),
                          looks=[undecided])
    assert stop_reason(state, 0.5, 10.0) is None
    assert stop_reason(state, 1.0, 10.0) == "cost budget spent"
    assert stop_reason(state, None, 60.0) == "time budget spent"
    state.looks *= 3
    assert stop_reason(state, 0.5, 10.0) == "trial budget spent"


def test_t_quantiles_match_scipy() -> None:
    for df in (5, 9, 30):
        for p in (0.975, 0.995, 0.9975):
            assert t_quantile(p, df) == pytest.approx(scipy_stats.t.ppf(p, df), rel=0.01)


def test_the_mde_is_beside_no_significant_change_and_unknown_without_spread() -> None:
    seen = Estimate(value=-0.04, low=-0.121, high=0.043, n_clusters=20)
    assert mde(seen) == pytest.approx(2.8016 * 0.164 / 3.9199, rel=1e-3)
    assert verdict_text("no significant change", 20, difference=seen) == \
        "no significant change (could detect +-11.7 points at 80% power)"
    flat = Estimate(value=0.0, low=0.0, high=0.0, n_clusters=8)
    assert mde(flat) is None
    assert verdict_text("no significant change", 8, difference=flat) == "no significant change"
