"""Rich tables for results shown in the terminal."""

from __future__ import annotations

import math

from rich.console import Group as RichGroup
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from benchwright.coding.evaluation import CheckpointEvaluation
from benchwright.coding.policies import PassPolicy
from benchwright.report.coding import CodingReport
from benchwright.runs.models import RunResult
from benchwright.runs.regrade import VerdictChange
from benchwright.stats import Estimate

SHOWN_POLICIES = (PassPolicy.CORE_CASES, PassPolicy.ALL_NON_ERROR_CASES, PassPolicy.ALL_CASES)


def _ratio(passed: int, total: int) -> Text:
    style = "green" if passed == total else ("yellow" if passed else "red")
    return Text(f"{passed}/{total}", style=style)


def evaluation_view(evaluation: CheckpointEvaluation) -> RenderableType:
    """Counts per group, policy verdicts, status and duration of one graded checkpoint."""
    title = f"{evaluation.problem} / {evaluation.checkpoint}"
    table = Table(title=title, title_justify="left", show_edge=False)
    table.add_column("group")
    table.add_column("passed/total", justify="right")
    for group, count in evaluation.counts.items():
        table.add_row(str(group), _ratio(count.passed, count.total))
    total = sum(c.total for c in evaluation.counts.values())
    table.add_row("all", _ratio(sum(c.passed for c in evaluation.counts.values()), total),
                  end_section=True)
    verdicts = Text("  ".join(""))
    for policy in SHOWN_POLICIES:
        ok = evaluation.verdicts.get(policy, False)
        verdicts.append(f"{policy}: ", style="bold")
        verdicts.append("pass" if ok else "fail", style="green" if ok else "red")
        verdicts.append("   ")
    footer = Text(
        f"status: {evaluation.status}   pytest exit {evaluation.pytest_exit_code}   "
        f"collected {evaluation.pytest_collected}   tests {evaluation.duration_s:.1f} s   "
        f"total {evaluation.total_duration_s:.1f} s   runtime {evaluation.grader.runtime}",
        style="dim",
    )
    parts: list[RenderableType] = [table, verdicts, footer]
    for reason in (evaluation.infrastructure_reason, evaluation.tampering_reason):
        if reason:
            parts.append(Text(reason, style="red"))
    return RichGroup(*parts)


def _pct(estimate: Estimate) -> str:
    if math.isnan(estimate.value):
        return "-"
    return (f"{100 * estimate.value:.1f}%  [{100 * estimate.low:.1f}, "
            f"{100 * estimate.high:.1f}]")


def run_summary_view(result: RunResult, report: CodingReport) -> RenderableType:
    """Solve rates with CIs and every attempt, checkpoint by checkpoint."""
    rates = Table(title=f"run {result.run_dir}", title_justify="left", show_edge=False)
    rates.add_column("metric")
    rates.add_column("value  [95% CI]", justify="right")
    for metric in [*report.solve_rates, *report.group_pass_rates]:
        rates.add_row(metric.name, _pct(metric.estimate))
    attempts = Table(show_edge=False)
    attempts.add_column("problem")
    attempts.add_column("trial", justify="right")
    attempts.add_column("checkpoints")
    marks = {"solved": "[green]✔[/]", "passed": "[yellow]◐[/]", "failed": "[red]✘[/]",
             "infra": "[magenta]⚠[/]"}
    for row in report.problems:
        attempts.add_row(row.problem, str(row.trial),
                         " ".join(marks.get(c, "[dim]·[/]") for c in row.cells))
    footer = Text(
        f"{result.n_checkpoints_solved}/{result.n_checkpoints} checkpoints solved, "
        f"{result.n_problems_solved}/{result.n_problems} problems solved"
        f"{_infra_note(result)}"
        f"{'  (incomplete: ' + '; '.join(result.errors) + ')' if result.errors else ''}   "
        "✔ solved  ◐ passed the policy  ✘ failed  ⚠ infrastructure error  · not reached",
        style="dim",
    )
    return RichGroup(rates, attempts, footer)


def _infra_note(result: RunResult) -> str:
    if not result.n_checkpoints_infra_error:
        return ""
    return (f", {result.n_checkpoints_infra_error} infrastructure errors (not scored; "
            f"--resume {result.run_dir} redoes them)")


def changes_view(changes: list[VerdictChange], n_checkpoints: int) -> RenderableType:
    """The verdicts that re-grading changed, or a line saying none did."""
    if not changes:
        return Text(f"re-graded {n_checkpoints} checkpoints: no verdict changed", style="green")
    table = Table(title=f"re-graded {n_checkpoints} checkpoints: {len(changes)} changes",
                  title_justify="left", show_edge=False)
    for column in ("problem", "trial", "checkpoint", "what", "before", "after"):
        table.add_column(column)
    for c in changes:
        table.add_row(c.problem, str(c.trial), c.checkpoint, c.what, c.before, c.after)
    return table
