"""Markdown rendering of a coding report."""

from __future__ import annotations

import math

from benchwright.report.coding import CodingReport, Metric
from benchwright.stats import Estimate


def _fmt(value: float, percent: bool) -> str:
    if math.isnan(value):
        return "-"
    return f"{100 * value:.1f}%" if percent else f"{value:.3g}"


def _ci(estimate: Estimate, percent: bool) -> str:
    return (f"{_fmt(estimate.value, percent)} "
            f"[{_fmt(estimate.low, percent)}, {_fmt(estimate.high, percent)}]")


def _metric_table(metrics: list[Metric], percent: bool) -> list[str]:
    lines = ["| metric | value [95% CI] | problems |", "|---|---|---|"]
    lines += [f"| {m.name} | {_ci(m.estimate, percent)} | {m.estimate.n_clusters} |"
              for m in metrics]
    return lines


def render_markdown(report: CodingReport) -> str:
    """The report as Markdown: summary tables first, then every attempt."""
    out = [f"# benchwright report: {report.run_dir}", "",
           f"agent `{report.agent}`, model `{report.model or '-'}`, {report.n_problems} problems "
           f"x {report.n_trials} trials. CIs: 95% bootstrap over problems.", "",
           "## Solve rates", "", *_metric_table(report.solve_rates, True), "",
           "## Tests passed by group", "", *_metric_table(report.group_pass_rates, True), ""]
    if report.quality:
        out += ["## Code quality (mean per checkpoint)", "",
                *_metric_table(report.quality, False), ""]
    out += _infra_errors(report)
    out += _per_checkpoint(report)
    out += _comparisons(report)
    out += ["## Attempts", "", "| problem | trial | checkpoints |", "|---|---|---|"]
    out += [f"| {row.problem} | {row.trial} | {' '.join(_mark(c) for c in row.cells)} |"
            for row in report.problems]
    return "\n".join(out) + "\n"


def _per_checkpoint(report: CodingReport) -> list[str]:
    if not report.per_checkpoint:
        return []
    names = list(dict.fromkeys(m.name for row in report.per_checkpoint for m in row.metrics))
    lines = ["## By checkpoint (erosion per checkpoint included)", "",
             "| checkpoint | n | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for row in report.per_checkpoint:
        by_name = {m.name: m for m in row.metrics}
        cells = [_ci(by_name[n].estimate, n == "solved rate") if n in by_name else "-"
                 for n in names]
        lines.append(f"| {row.index} | {row.n} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _comparisons(report: CodingReport) -> list[str]:
    if report.baseline is None:
        return []
    lines = [f"## Against baseline {report.baseline}", "",
             "| metric | difference [95% CI] | verdict |", "|---|---|---|"]
    lines += [f"| {c.name} | {_ci(c.difference, True)} | {c.verdict} |"
              for c in report.comparisons]
    return [*lines, ""]


def _infra_errors(report: CodingReport) -> list[str]:
    if not report.infra_errors:
        return []
    lines = ["## Infrastructure errors", "",
             f"{len(report.infra_errors)} checkpoint(s) could not be run because the model "
             "provider kept failing (429, 5xx, timeouts). Those attempts are left out of every "
             "figure above; `benchwright run coding --resume RUN_DIR` runs them again.", "",
             "| problem | trial | checkpoint | attempts | error |", "|---|---|---|---|---|"]
    lines += [f"| {e.problem} | {e.trial} | {e.checkpoint} | {e.attempts} | "
              f"{(e.error or '-').replace('|', '/')} |" for e in report.infra_errors]
    return [*lines, ""]


def _mark(cell: str) -> str:
    return {"solved": "✔", "passed": "◐", "failed": "✘", "infra": "⚠"}.get(cell, "·")
