"""A coding run as a point of the cost-accuracy frontier (`report_parts/frontier.py`): its
checkpoint
solve rate, cost and agent time per attempt, read from its digest (the viewer's run list reads
the same), so the report, the API and the overview place it alike."""

from __future__ import annotations

import math
from pathlib import Path

from benchwright.coding.attempts.models import Manifest
from benchwright.coding.attempts.tallies import RunDigest, read_run_digest
from benchwright.coding.report.figures import solve_rate_metrics
from benchwright.report_parts.frontier import RunPoint


def coding_point(run_dir: Path, manifest: Manifest, digest: RunDigest | None = None,
                 with_ci: bool = True) -> RunPoint | None:
    """The run's point; None before any attempt is scored. `with_ci`: the rate's 95% CI too (a
    bootstrap: the run list leaves it to the page that draws it)."""
    digest = digest or read_run_digest(run_dir, manifest)
    attempts = sum(t.attempts for t in digest.tallies)
    solved = sum(t.solved for t in digest.tallies)
    planned = sum(t.planned for t in digest.tallies)
    if not attempts or not planned:
        return None
    estimate = None
    if with_ci:
        found = {m.name: m.estimate for m in solve_rate_metrics(digest.tallies)}
        estimate = found.get("checkpoints solved")
    known = digest.cost_usd is not None and not digest.cost_unknown
    config = manifest.config
    return RunPoint(
        run_dir=str(run_dir), agent=config.agent, model=config.model,
        solve_rate=solved / planned,
        solve_rate_ci=estimate if estimate is None or not math.isnan(estimate.value) else None,
        cost_per_problem=digest.cost_usd / attempts if known and digest.cost_usd is not None
        else None, time_per_problem=digest.agent_time_s / attempts)
