"""`benchwright report` of a Harbor run: report.md's figures (harbor/runner.py writes them at
the end of every run) and, with `--baseline`, the paired comparison with another Harbor run of
the same tasks (harbor/figures.py)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from benchwright.harbor.figures import BaselineComparison, compare, comparison_lines, reward_counts
from benchwright.harbor.runner import HarborRunResult, finish, journaled, load_manifest, render


class HarborReport(BaseModel):
    """What `benchwright report` shows of a Harbor run."""

    result: HarborRunResult
    """result.json's figures."""
    comparison: BaselineComparison | None = None
    """Against `--baseline`, when given."""


def build_report(run_dir: Path, baseline: Path | None) -> HarborReport:
    """The run's figures (result.json and report.md rewritten), compared with `baseline`."""
    result = finish(run_dir)
    if baseline is None:
        return HarborReport(result=result)
    load_manifest(baseline)  # not a harbor run: one line naming it
    comparison = compare(reward_counts(journaled(run_dir)), reward_counts(journaled(baseline)),
                         baseline.resolve())
    return HarborReport(result=result, comparison=comparison)


def render_report(report: HarborReport) -> str:
    """report.md's text, with the comparison after the headline figures."""
    text = render(report.result)
    if report.comparison is None:
        return text
    head, _, table = text.partition("\n\n| task")
    return "\n".join([head, *comparison_lines(report.comparison)]) + "\n\n| task" + table
