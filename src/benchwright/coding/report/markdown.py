"""Markdown rendering of a coding report."""

from __future__ import annotations

import math

from benchwright.coding.attempts.judging.summary import JudgeOverview
from benchwright.coding.attempts.models import RunTotals
from benchwright.coding.report.counterfactual import CounterfactualReport, StartRow
from benchwright.coding.report.failures import (
    AttemptFailure,
    CheckpointRules,
    FailingTests,
    rule_line,
)
from benchwright.coding.report.figures import (
    TREND,
    CodingReport,
    Comparison,
    Metric,
    ProblemQuality,
)
from benchwright.coding.report.sources import source_table
from benchwright.llm.pricing import format_cost
from benchwright.report_parts.failure_causes import cause_lines
from benchwright.report_parts.frontier import Frontier
from benchwright.report_parts.grading_noise import noise_lines
from benchwright.report_parts.header import header_lines
from benchwright.report_parts.sequence import sequence_lines
from benchwright.report_parts.trials import TrialStats, fmt_rate, pass_k_lines
from benchwright.stats.estimates import Estimate, few_clusters, verdict_text

FEW = "†"
"""Marks an interval over fewer clusters than the report's minimum."""


def _fmt(value: float, percent: bool) -> str:
    if math.isnan(value):
        return "-"
    return f"{100 * value:.1f}%" if percent else f"{value:.3g}"


def _ci(estimate: Estimate, percent: bool) -> str:
    mark = FEW if few_clusters(estimate) else ""
    return (f"{_fmt(estimate.value, percent)} "
            f"[{_fmt(estimate.low, percent)}, {_fmt(estimate.high, percent)}]{mark}")


def _metric_table(metrics: list[Metric], percent: bool) -> list[str]:
    lines = ["| metric | value [95% CI] | problems |", "|---|---|---|"]
    lines += [f"| {m.name} | {_ci(m.estimate, percent)} | {m.estimate.n_clusters} |"
              for m in metrics]
    return lines


def _quality_by_problem(rows: list[ProblemQuality]) -> list[str]:
    """SCBench's erosion and verbosity over checkpoints, per problem (mean change per
    checkpoint; share of checkpoints where it rose), trials as clusters."""
    if not rows:
        return []
    lines = ["## Erosion over checkpoints, per problem (SCBench's figures)", "",
             "| problem | " + " | ".join(TREND) + " |", "|---|" + "---|" * len(TREND)]
    for row in rows:
        by_name = {m.name: m.estimate for m in row.metrics}
        cells = [_ci(by_name[n], False) if n in by_name else "unknown" for n in TREND]
        lines.append(f"| {row.problem} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _cell(text: str | None) -> str:
    """Text from test output made safe for a table cell or a code span."""
    return (text or "-").replace("|", "/").replace("`", "'")


def render_markdown(report: CodingReport) -> str:
    """The report as Markdown: identity and totals, summary tables, failures, every attempt."""
    out = [f"# benchwright report: coding run {report.run_dir}", "",
           *header_lines(report.header), "", *_totals(report.totals),
           "## Solve rates", "", *_metric_table(report.solve_rates, True), "",
           _denominators(report), "",
           "## Tests passed by group", "", *_metric_table(report.group_pass_rates, True), ""]
    if report.quality:
        out += ["## Code quality (mean per checkpoint)", "",
                *_metric_table(report.quality, False), ""]
    out += _quality_by_problem(report.quality_by_problem)
    out += _judge(report.judge)
    out += _trials(report.trials)
    out += _failures(report.failures, report.header.start_from == "reference")
    out += cause_lines(report.failure_causes) if report.failure_causes else []
    out += noise_lines(report.grading_noise,
                       report.trials.between_trial_std if report.trials else None, "checkpoint")
    out += _rules(report.rules_fired)
    out += _infra_errors(report)
    out += _per_checkpoint(report)
    out += _comparisons(report)
    out += sequence_lines(report.sequence) if report.sequence else []
    out += counterfactual_lines(report.counterfactual) if report.counterfactual else []
    out += frontier_lines(report.frontier) if report.frontier else []
    out += source_table(report.problem_sources)
    out += ["## Attempts", "", "| problem | trial | checkpoints |", "|---|---|---|"]
    out += [f"| {row.problem} | {row.trial} | {' '.join(_mark(c) for c in row.cells)} |"
            for row in report.problems]
    out += ["", "✔ solved, ◐ passed the pass policy, ✘ failed, ⚠ infrastructure error, "
            "∅ no reference solution to start from, · not reached.",
            "", f"CIs: 95% percentile bootstrap that resamples problems. {FEW}: fewer than "
            f"{report.min_clusters} problems behind the interval, too few for it to be "
            "trusted (see docs/runs.md)."]
    return "\n".join(out) + "\n"


def _totals(totals: RunTotals) -> list[str]:
    return ["## Totals", "", "| cost (USD) | tokens in | tokens out | tokens in, cached | "
            "steps | agent time (s) | grading time (s) |", "|---:|---:|---:|---:|---:|---:|---:|",
            f"| {format_cost(totals.cost_usd, totals.cost_unknown > 0, dollar=False)} | "
            f"{totals.input_tokens:,} | {totals.output_tokens:,} | "
            f"{totals.cached_input_tokens:,} | {totals.steps:,} | {totals.agent_time_s:.1f} | "
            f"{totals.grading_time_s:.1f} |", "",
            "Summed over every agent turn, those stopped by the provider included; times add "
            "up across parallel attempts.", ""]


def _denominators(report: CodingReport) -> str:
    return ("Checkpoint rates count every checkpoint of every scored attempt (a checkpoint "
            "never reached counts as not solved); problem rates count attempts (problem x "
            f"trial). {_count(report.n_problems, 'problem')} x {_count(report.n_trials, 'trial')}.")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _trials(trials: TrialStats | None) -> list[str]:
    if trials is None:
        return []
    lines = ["## Trials", "", f"A trial succeeds when {trials.success}.", "",
             *pass_k_lines(trials, "problem", lambda e: _ci(e, True))]
    per_trial = ", ".join(f"trial {k}: {fmt_rate(v)}" for k, v in trials.per_trial_rate.items())
    lines += ["", f"- success rate per trial: {per_trial}",
              f"- std between trials: {_num(trials.between_trial_std)}; mean std within a "
              f"problem: {_num(trials.mean_within_std)}", ""]
    return lines


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _failures(failures: list[AttemptFailure], reference_start: bool) -> list[str]:
    if not failures:
        return []
    intro = ("Reference starts go on past a failure: each checkpoint that failed the pass "
             "policy, and why (and any attempt that stopped short)." if reference_start else
             "Each attempt that ended before its last checkpoint: where, and why.")
    lines = ["## Failures", "", intro, ""]
    for f in failures:
        detail = f": {_cell(f.detail)}" if f.detail else ""
        lines.append(f"### {f.problem} trial {f.trial}: {'ended' if f.ended else 'failed'} at "
                     f"{f.checkpoint} ({f.reason}){detail}")
        lines += ["", *rule_lines(f.tests), *failing_test_lines(f.tests), ""]
    return lines


def _rules(fired: list[CheckpointRules]) -> list[str]:
    if not fired:
        return []
    lines = ["## Grading rules that fired", "",
             "A guard of the grader fired on these checkpoints (docs/grading.md).", ""]
    for found in fired:
        lines.append(f"### {found.problem} trial {found.trial}: {found.checkpoint} "
                     f"({'passed' if found.passed else 'failed'})")
        lines += ["", *(f"- {_cell(rule_line(r))}" for r in found.rules_fired), ""]
    return lines


def rule_lines(tests: FailingTests) -> list[str]:
    """Markdown bullets: a line per grading rule that fired on the checkpoint."""
    return [f"- {_cell(rule_line(r))}" for r in tests.rules_fired]


def failing_test_lines(tests: FailingTests) -> list[str]:
    """Markdown bullets: the first failing tests, the count of the rest, the full output."""
    lines = [f"- {t.group} `{_cell(t.name)}` ({t.outcome}): {_cell(t.message)}"
             for t in tests.listed]
    if tests.n_failing > len(tests.listed):
        lines.append(f"- ... and {tests.n_failing - len(tests.listed)} more failing tests")
    if tests.output is not None:
        lines.append(f"- full output: {tests.output}")
    return lines


def _per_checkpoint(report: CodingReport) -> list[str]:
    if not report.per_checkpoint:
        return []
    names = list(dict.fromkeys([*(m.name for row in report.per_checkpoint for m in row.metrics),
                                *(n for row in report.per_checkpoint for n in row.unknown)]))
    lines = ["## By checkpoint (erosion per checkpoint included)", "",
             "| checkpoint | n | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for row in report.per_checkpoint:
        by_name = {m.name: m for m in row.metrics}
        cells = [_ci(by_name[n].estimate, n == "solved rate") if n in by_name
                 else "unknown" if n in row.unknown else "-" for n in names]
        lines.append(f"| {row.index} | {row.n} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _comparisons(report: CodingReport) -> list[str]:
    if report.baseline is None:
        return []
    lines = [f"## Against baseline {report.baseline}", "",
             f"Paired over the {_count(report.n_paired, 'problem')} both runs scored. "
             f"Only in this run: {', '.join(report.only_run) or 'none'}. "
             f"Only in the baseline: {', '.join(report.only_baseline) or 'none'}. "
             f"A verdict needs at least {report.min_clusters} paired problems and a 95% CI "
             "that excludes zero.", "",
             "| metric | better | difference [95% CI] | verdict |", "|---|---|---|---|"]
    lines += [f"| {c.name} | {c.better} | {_difference(c)} | {_verdict(c)} |"
              for c in report.comparisons]
    return [*lines, ""]


def _verdict(c: Comparison) -> str:
    """The verdict, with the smallest difference it could have seen beside `no significant
    change`."""
    return verdict_text(c.verdict, c.difference.n_clusters, difference=c.difference,
                        points=not c.name.startswith("cost"))


def _difference(c: Comparison) -> str:
    return _ci(c.difference, not c.name.startswith("cost"))


def _infra_errors(report: CodingReport) -> list[str]:
    if not report.infra_errors:
        return []
    lines = ["## Infrastructure errors", "",
             f"{len(report.infra_errors)} checkpoint(s) could not be run because the model "
             "provider kept failing (429, 5xx, timeouts). Those attempts are left out of every "
             "figure above; `benchwright run coding --resume RUN_DIR` runs them again.", "",
             "| problem | trial | checkpoint | attempts | error |", "|---|---|---|---|---|"]
    lines += [f"| {e.problem} | {e.trial} | {e.checkpoint} | {e.attempts} | "
              f"{_cell(e.error)} |" for e in report.infra_errors]
    return [*lines, ""]


def _judge(judge: JudgeOverview | None) -> list[str]:
    if judge is None:
        return []
    lines = ["## LLM judge", "",
             f"{judge.n_judged} of {judge.n_checkpoints} checkpoints judged by "
             f"{', '.join(judge.models)} ({judge.samples} sample(s) per request), "
             f"{format_cost(judge.cost_usd, judge.cost_unknown, dollar=False)} USD. Verbosity "
             "above includes rubric flags per LOC.", ""]
    if judge.errors:
        lines += [f"{len(judge.errors)} checkpoint(s) could not be judged (not scored as zero "
                  "flags; `benchwright metrics judge RUN_DIR` tries them again):", "",
                  *(f"- {_cell(e)}" for e in judge.errors), ""]
    if judge.agreement:
        lines += ["Agreement across samples, per rubric item: Krippendorff's alpha over lines "
                  "(1: full agreement, 0: chance), stability = mean share of samples raising a "
                  "flag.", "", "| item | alpha | stability | flags (kept) | lines flagged |",
                  "|---|---:|---:|---:|---:|"]
        lines += [f"| {a.criterion} | {_num(a.alpha)} | {_num(a.stability)} | "
                  f"{a.flags} ({a.flags_kept}) | {a.lines_flagged} / {a.lines} |"
                  for a in judge.agreement]
        lines.append("")
    return lines


def _mark(cell: str) -> str:
    return {"solved": "✔", "passed": "◐", "failed": "✘", "infra": "⚠",
            "no reference": "∅"}.get(cell, "·")


def frontier_lines(frontier: Frontier) -> list[str]:
    """The cost-accuracy frontier section (`report --frontier`)."""
    lines = ["## Cost-accuracy frontier", "",
             "Each run (agent x model): checkpoints solved against cost and agent time per "
             "attempt (problem x trial). On a frontier: no other run solves as much for less.", "",
             "| run | solved [95% CI] | cost per problem (USD) | agent time per problem (s) | "
             "frontier |", "|---|---|---|---|---|"]
    for p in frontier.points:
        on = [name for name, labels in (("cost", frontier.cost), ("time", frontier.time))
              if p.label in labels]
        rate = _ci(p.solve_rate_ci, True) if p.solve_rate_ci else f"{100 * p.solve_rate:.1f}%"
        time = "-" if p.time_per_problem is None else f"{p.time_per_problem:.1f}"
        cost = format_cost(p.cost_per_problem, dollar=False)
        lines.append(f"| {_cell(p.label)} | {rate} | {cost} | {time} | {', '.join(on) or '-'} |")
    lines += ["", f"- cost frontier: {' → '.join(frontier.cost) or 'none'}",
              f"- time frontier: {' → '.join(frontier.time) or 'none'}"]
    if frontier.cost_left_off:
        lines.append(f"- left off the cost frontier (cost unknown): "
                     f"{', '.join(frontier.cost_left_off)}")
    return [*lines, ""]


def counterfactual_lines(cf: CounterfactualReport) -> list[str]:
    """The chain-against-reference-start section (`report --counterfactual`)."""
    lines = ["## Chain against reference starts (counterfactual)", "",
             f"Chain run: `{cf.chain_run}`; reference-start run: `{cf.reference_run}`. Paired by "
             f"problem, trial and checkpoint position over the {cf.n_paired} problems both "
             f"scored (only in the chain run: {', '.join(cf.only_chain) or 'none'}; only in "
             f"the reference-start run: {', '.join(cf.only_reference) or 'none'}). Solved: "
             "every test passed. Only checkpoints both runs reached are paired: one the chain "
             "never got to (it stopped at an earlier failure) is listed below, not counted. "
             "Outcomes: both solved / chain only / reference start only / neither. "
             "Attributable to inherited code: of the checkpoints the chain failed, the share "
             "the reference start solved. Checkpoint 1 starts empty in both runs (a control). "
             f"A verdict needs at least {cf.min_clusters} problems and a 95% CI of the "
             "difference that excludes zero (docs/runs.md).", "",
             "| checkpoint | problems | outcomes | chain solved [95% CI] | reference start "
             "solved [95% CI] | difference [95% CI] | verdict | attributable to inherited "
             "code [95% CI] |", "|---|---|---|---|---|---|---|---|"]
    rows = [*cf.per_checkpoint, *([cf.overall] if cf.overall else [])]
    lines += [_start_row(row) for row in rows]
    notes = [f"- runs differ besides the start: {d}" for d in cf.differences]
    notes += [f"- left out: {_cell(item)}" for item in cf.left_out]
    notes += [f"- not reached, not counted: {_cell(item)}" for item in cf.not_reached]
    return [*lines, "", *notes, *([""] if notes else [])]


def _start_row(row: StartRow) -> str:
    c = row.counts
    label = {"1": "1 (same start)", "2+": "**2+ (overall)**"}.get(row.checkpoints,
                                                                  row.checkpoints)
    share = _ci(row.attributable, True) + f" ({c.reference_only}/{c.reference_only + c.neither})" \
        if row.attributable is not None else "-"
    return (f"| {label} | {row.n_problems} | {c.both_solved} / {c.chain_only} / "
            f"{c.reference_only} / {c.neither} | {_ci(row.chain, True)} | "
            f"{_ci(row.reference, True)} | {_ci(row.difference, True)} | "
            f"{verdict_text(row.verdict, row.n_problems, difference=row.difference)} | "
            f"{share} |")
