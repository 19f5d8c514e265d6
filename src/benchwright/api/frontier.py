"""`frontier(paths)`: the cost-accuracy frontier of coding runs (`report_parts/frontier.py`), the
same
`report --frontier` prints and the viewer's overview draws."""

from __future__ import annotations

from pathlib import Path

from benchwright.api.frames import Paths, runs_among
from benchwright.api.runs import CodingRun
from benchwright.coding.report.frontier_points import coding_point
from benchwright.report_parts.frontier import Frontier, frontier_of


def frontier(paths: Paths) -> Frontier:
    """Each coding run among `paths` (run folders, or folders of runs; web runs are skipped) as
    a point of solve rate against cost and time per problem, with the Pareto frontiers; a run
    whose cost is unknown is left off the cost frontier (`cost_left_off`)."""
    seen: set[Path] = set()
    points = []
    for run in runs_among(paths):
        if isinstance(run, CodingRun) and run.path.resolve() not in seen:  # each run once
            seen.add(run.path.resolve())
            points.append(coding_point(run.path, run.manifest))
    return frontier_of([p for p in points if p is not None])
