"""The cost-accuracy frontier's one rule (report_parts/frontier.py), by hand."""

from __future__ import annotations

from benchwright.report_parts.frontier import RunPoint, frontier_of, pareto


def _p(name: str, rate: float, cost: float | None, time: float = 1.0) -> RunPoint:
    return RunPoint(run_dir=f"/runs/{name}", agent="mini", model=name, solve_rate=rate,
                    cost_per_problem=cost, time_per_problem=time)


def test_the_frontier_keeps_the_runs_no_other_beats_on_both() -> None:
    points = [_p("cheap", 0.2, 0.01, 5.0), _p("mid", 0.6, 0.05, 1.0), _p("dear", 0.9, 0.50, 9.0),
              _p("worse", 0.5, 0.10, 2.0),  # mid solves more for less: dominated
              _p("tie", 0.6, 0.05, 3.0),    # the same as mid: neither dominates the other
              _p("unpriced", 1.0, None, 0.5)]
    found = frontier_of(points)
    assert found.cost == ["mini · cheap", "mini · mid", "mini · tie", "mini · dear"]
    assert found.cost_left_off == ["mini · unpriced"]  # never placed at $0
    assert found.time == ["mini · unpriced"]  # fastest and best: it dominates every other
    assert pareto([], lambda p: p.cost_per_problem) == []


def test_labels_name_the_folder_when_two_runs_share_agent_and_model() -> None:
    other = _p("m", 0.5, 0.2).model_copy(update={"run_dir": "/runs/other"})
    found = frontier_of([_p("m", 0.5, 0.1), other])
    assert [p.label for p in found.points] == ["mini · m (m)", "mini · m (other)"]
