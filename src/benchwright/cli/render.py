"""Rich tables for results shown in the terminal."""

from __future__ import annotations

import math

from rich.console import Group as RichGroup
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from benchwright.coding.attempts.models import RunResult
from benchwright.coding.attempts.regrade import VerdictChange
from benchwright.coding.grading.evaluation import CheckpointEvaluation
from benchwright.coding.grading.policies import PassPolicy
from benchwright.coding.report.failures import AttemptFailure, FailingTests, rule_line
from benchwright.coding.report.figures import CodingReport
from benchwright.llm.pricing import format_cost
from benchwright.stats.estimates import MIN_CLUSTERS, Estimate, few_clusters

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
    parts += [_unwrapped(rule_line(rule), style="red") for rule in evaluation.rules_fired]
    return RichGroup(*parts)


def failing_tests_view(tests: FailingTests) -> RenderableType:
    """The first failing tests (group, name, first line of the message), how many more, and
    where pytest's full output is. Test names and messages are shown as plain text."""
    lines: list[RenderableType] = []
    if tests.n_failing:
        lines.append(Text(f"failing tests ({tests.n_failing}):", style="bold red"))
    for test in tests.listed:
        line = _unwrapped("  ")
        line.append(f"{test.group} ", style="bold")
        line.append(test.name)
        line.append(f" ({test.outcome})", style="dim")
        if test.message:
            line.append(f": {test.message}")
        lines.append(line)
    if tests.n_failing > len(tests.listed):
        lines.append(Text(f"  ... and {tests.n_failing - len(tests.listed)} more"))
    if tests.output is not None:
        lines.append(_unwrapped(f"full output: {tests.output}", style="dim"))
    return RichGroup(*lines)


def _unwrapped(text: str, style: str = "") -> Text:
    """A line rich does not break (print it with a `soft_wrap` console; the terminal wraps
    it): paths and test ids stay whole and can be copied."""
    return Text(text, style=style, no_wrap=True)


MAX_FAILURES_SHOWN = 20
"""Attempts whose failure the end-of-run summary details; report.md has them all."""


def failures_view(failures: list[AttemptFailure]) -> RenderableType:
    """Why each attempt that ended early ended, with its failing tests."""
    parts: list[RenderableType] = []
    for failure in failures[:MAX_FAILURES_SHOWN]:
        verb = "ended" if failure.ended else "failed"
        head = _unwrapped(f"{failure.problem}/trial_{failure.trial} {verb} at "
                          f"{failure.checkpoint}: ", style="bold")
        head.append(failure.reason, style="red")
        if failure.detail:
            head.append(f" ({failure.detail})")
        parts += [head, *(_unwrapped(f"  {rule_line(r)}", style="red")
                          for r in failure.tests.rules_fired), failing_tests_view(failure.tests)]
    if len(failures) > MAX_FAILURES_SHOWN:
        parts.append(Text(f"... and {len(failures) - MAX_FAILURES_SHOWN} more attempts "
                          "(all in report.md)", style="dim"))
    return RichGroup(*parts)


def _pct(estimate: Estimate) -> str:
    if math.isnan(estimate.value):
        return "-"
    mark = " †" if few_clusters(estimate) else ""
    return (f"{100 * estimate.value:.1f}%  [{100 * estimate.low:.1f}, "
            f"{100 * estimate.high:.1f}]{mark}")


def run_summary_view(result: RunResult, report: CodingReport) -> RenderableType:
    """Solve rates with CIs and every attempt, checkpoint by checkpoint."""
    starts = " (checkpoints 2+ start from the reference)" if result.start_from == "reference" \
        else ""
    rates = Table(title=f"run {result.run_dir}{starts}", title_justify="left", show_edge=False)
    rates.add_column("metric")
    rates.add_column("value  [95% CI]", justify="right")
    for metric in [*report.solve_rates, *report.group_pass_rates]:
        rates.add_row(metric.name, _pct(metric.estimate))
    attempts = Table(show_edge=False)
    attempts.add_column("problem")
    attempts.add_column("trial", justify="right")
    attempts.add_column("checkpoints")
    marks = {"solved": "[green]✔[/]", "passed": "[yellow]◐[/]", "failed": "[red]✘[/]",
             "infra": "[magenta]⚠[/]", "no reference": "[dim]∅[/]"}
    for row in report.problems:
        attempts.add_row(row.problem, str(row.trial),
                         " ".join(marks.get(c, "[dim]·[/]") for c in row.cells))
    footer = Text(
        f"{_counts(result)}{_infra_note(result)}"
        f"{'  (incomplete: ' + '; '.join(result.errors) + ')' if result.errors else ''}   "
        "✔ solved  ◐ passed the policy  ✘ failed  ⚠ infrastructure error  · not reached"
        f"{'  ∅ no reference to start from' if result.no_reference else ''}"
        f"   † fewer than {MIN_CLUSTERS} problems: the interval is not to be trusted",
        style="dim",
    )
    totals = result.totals
    cost = format_cost(totals.cost_usd, totals.cost_unknown > 0)
    spent = Text(f"cost {cost}, tokens {totals.input_tokens:,} in "
                 f"({totals.cached_input_tokens:,} cached) / {totals.output_tokens:,} out, "
                 f"agent {totals.agent_time_s:.1f} s, grading {totals.grading_time_s:.1f} s"
                 f"{_traffic_note(result)}", style="dim")
    return RichGroup(rates, attempts, failures_view(report.failures), footer, spent)


def _traffic_note(result: RunResult) -> str:
    """Where the model calls went, when a cassette was involved."""
    return "" if result.llm is None else f"; model calls {result.llm.describe()}"


def _counts(result: RunResult) -> str:
    """The footer's counts, with the same denominators as the rates above: every checkpoint of
    every scored attempt, reached or not; attempts (problem x trial) for problems."""
    return (f"{result.n_checkpoints_solved}/{result.n_checkpoints_planned} checkpoints solved "
            f"({result.n_checkpoints} reached), {result.n_attempts_solved}/{result.n_attempts} "
            f"attempts solved every checkpoint")


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
    repeated = any(c.grading > 1 for c in changes)  # `eval --repeat`: which grading changed it
    for column in ("problem", "trial", "checkpoint", "what", "before", "after"):
        table.add_column(column)
    if repeated:
        table.add_column("grading")
    for c in changes:
        table.add_row(c.problem, str(c.trial), c.checkpoint, c.what, c.before, c.after,
                      *([str(c.grading)] if repeated else []))
    return table

