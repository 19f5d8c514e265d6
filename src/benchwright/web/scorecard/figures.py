"""Figures of a scored web folder: pass rates with CIs, the template macro average, failure modes,
unpassable tasks, variance across trials, and a paired comparison against a baseline.

Definitions (docs/web.md has them in full):
- a task's score is the mean over its trials (one trial in the plain layout);
- pass rates are sum(scores) / sum(trials) with a 95% bootstrap CI that resamples tasks;
- per site, a task counts under every site it touches;
- the macro average is the mean over intent templates of the mean task score within each
  template, with a CI that resamples templates;
- a baseline comparison pairs tasks by id; a verdict only with at least MIN_CLUSTERS paired
  tasks and a CI of the difference that excludes zero (docs/runs.md);
- with several trials, pass@k and pass^k per task and overall (`report.trials`).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from statistics import mean, pstdev
from typing import Final, Literal

from pydantic import BaseModel, Field

from benchwright.llm.pricing import CostSum, format_cost
from benchwright.report_parts.failure_causes import CauseTable, cause_lines
from benchwright.report_parts.grading_noise import GradingNoise, noise_lines
from benchwright.report_parts.header import RunHeader, header_lines
from benchwright.report_parts.sequence import sequence_lines
from benchwright.report_parts.trials import TrialStats, pass_k_lines, trial_stats
from benchwright.stats.estimates import (
    MIN_CLUSTERS,
    Estimate,
    Verdict,
    few_clusters,
    judge,
    mean_ci,
    paired_difference_ci,
    proportion_ci,
    verdict_text,
)
from benchwright.stats.sequential import SequenceState
from benchwright.web.evaluation.evaluator import EvaluatorIdentity
from benchwright.web.evaluation.mismatch import Mismatch
from benchwright.web.evaluation.outcomes import Cause, cause_counts
from benchwright.web.evaluation.scoring import Amount, Count, TaskMetrics, TaskRow, WebEvalSummary
from benchwright.web.evaluation.tasks import Unpassable
from benchwright.web.scorecard.causes import summary_causes

REPORT_FORMAT: Final = "benchwright.web-report/2"
FEW = "†"
"""Marks an interval over fewer clusters than MIN_CLUSTERS."""
MAX_FAILING_SHOWN = 100
"""Failing attempts listed in report.md (the JSON report has them all)."""


class TaskScore(BaseModel):
    """One task's trials folded together."""

    task_id: int
    """The task's id."""
    sites: list[str]
    """The sites it touches."""
    intent_template_id: int
    """Its template."""
    unpassable: Unpassable | None
    """Set for tasks that cannot be passed."""
    scores: list[float]
    """Each trial's score, by trial number."""

    @property
    def total(self) -> float:
        """Sum of the trial scores."""
        return sum(self.scores)

    @property
    def mean(self) -> float:
        """Mean score over trials."""
        return self.total / len(self.scores)


class SiteStats(BaseModel):
    """One row of the per-site table."""

    site: str
    """The site."""
    n_tasks: int
    """Tasks touching it."""
    n_attempts: int
    """Scored attempts (trials) of those tasks."""
    pass_rate: Estimate
    """Pass rate with a CI resampling tasks."""
    avg_steps: float | None = None
    """Mean agent steps over attempts with a metrics.json."""
    avg_tokens: float | None = None
    """Mean tokens."""
    avg_cost_usd: float | None = None
    """Mean cost in US dollars; None when an attempt's cost is unknown (or none has metrics)."""
    avg_duration_s: float | None = None
    """Mean wall-clock seconds."""


class FailureModes(BaseModel):
    """What went wrong, counted over attempts."""

    cause: dict[str, int] = Field(default_factory=dict)
    """Every attempt's outcome by cause, each of the closed set listed
    (`web/evaluation/outcomes.py`):
    passed, wrong answer, step limit, agent error, evaluator error, infrastructure."""
    agent_status: dict[str, int]
    """The status each agent reported (SUCCESS, NOT_FOUND_ERROR, ..., (missing), ...)."""
    evaluator_status: dict[str, int]
    """The evaluator's verdicts: success, failure, error."""
    error_origin: dict[str, int]
    """Where errors came from: layout (a file missing or malformed) or evaluator."""


class UnpassableTask(BaseModel):
    """A flagged task present in the folder."""

    task_id: int
    """The task's id."""
    flag: Unpassable
    """known or probable."""
    score: float
    """Its mean score (normally 0)."""


class UnpassableView(BaseModel):
    """Totals with and without the tasks that cannot be passed."""

    flagged: list[UnpassableTask]
    """The flagged tasks that were scored."""
    pass_rate_all: Estimate
    """Pass rate over every task."""
    pass_rate_excluding: Estimate
    """Pass rate over passable tasks only."""
    macro_all: Estimate
    """Template macro average over every task."""
    macro_excluding: Estimate
    """Template macro average over passable tasks only."""


class TrialVariance(BaseModel):
    """How much scores move between trials of the same task."""

    n_tasks_with_trials: int
    """Tasks with two trials or more."""
    max_trials: int
    """The most trials any task has."""
    mean_within_task_std: float | None = None
    """Mean over those tasks of the population std of their trial scores."""
    per_trial_pass_rate: dict[int, float] = Field(default_factory=dict)
    """Trial k -> pass rate over the tasks that have a trial k."""
    between_trial_std: float | None = None
    """Population std of the per-trial pass rates."""
    pass_all_trials: float | None = None
    """Share of multi-trial tasks passed in every trial."""
    pass_any_trial: float | None = None
    """Share of multi-trial tasks passed in at least one trial."""


class TaskChange(BaseModel):
    """A task whose mean score changed against the baseline."""

    task_id: int
    """The task's id."""
    baseline: float
    """Its mean score in the baseline."""
    current: float
    """Its mean score now."""


class BaselineComparison(BaseModel):
    """This folder against a baseline folder, paired by task id."""

    baseline_dir: str
    """The baseline's folder."""
    n_paired: int
    """Tasks scored in both."""
    only_current: list[int]
    """Task ids scored here only (left out of the comparison)."""
    only_baseline: list[int]
    """Task ids scored in the baseline only."""
    current_pass_rate: float
    """Pass rate here, over the paired tasks."""
    baseline_pass_rate: float
    """Pass rate in the baseline, over the paired tasks."""
    difference: Estimate
    """Current minus baseline, with a paired bootstrap CI resampling tasks."""
    verdict: Verdict
    """regression / improvement only when the CI excludes zero."""
    by_template: Estimate | None = None
    """The same difference with intent templates as the clusters (tasks of a template are
    alike: resampling templates is the honest interval; `report --fail-if-worse` reads it).
    None in reports written before it existed."""
    improved: list[TaskChange]
    """Tasks that scored higher now."""
    regressed: list[TaskChange]
    """Tasks that scored lower now."""


class WebTotals(BaseModel):
    """What the scored attempts spent, from their metrics.json."""

    cost_usd: Amount | None = 0.0
    """Model cost in US dollars: the known part when some attempts' is unknown (`cost_unknown`),
    None when every one is."""
    cost_unknown: Count = 0
    """Attempts whose cost is unknown (no price for the model, or no cost in metrics.json)."""
    input_tokens: Count = 0
    """Model input tokens (the total when metrics.json does not split them)."""
    output_tokens: Count = 0
    """Model output tokens."""
    cached_input_tokens: Count = 0
    """Of the input tokens, those read from the provider's cache."""
    steps: Count = 0
    """Agent steps."""
    agent_time_s: Amount = 0.0
    """Wall-clock seconds of the trials, summed."""
    grading_time_s: Amount | None = None
    """Seconds the last scoring took (runs only; None when not measured)."""


class FailingAttempt(BaseModel):
    """An attempt that did not pass, and why."""

    task_id: int
    """The task."""
    trial: int
    """The trial."""
    status: str
    """The evaluator's verdict: failure or error."""
    cause: Cause = Cause.WRONG_ANSWER
    """Why it did not pass (`web/evaluation/outcomes.py`)."""
    agent_status: str
    """The status the agent reported."""
    error_msg: str | None = None
    """Why it is an error (a missing file, the evaluator failing)."""
    mismatches: list[Mismatch] = Field(default_factory=list)
    """What the evaluator expected and got."""
    agent_error: str | None = None
    """The agent's own error, from metrics.json (e.g. an invalid final response)."""


class WebReport(BaseModel):
    """Every figure of a scored folder (`--json` prints it; markdown renders it)."""

    format: Literal["benchwright.web-report/2"] = REPORT_FORMAT
    """This report's format and version (2: header, totals, failing attempts, pass@k,
    verdicts that need MIN_CLUSTERS tasks)."""
    output_dir: str
    """The scored folder."""
    header: RunHeader | None = None
    """The run's identity (a `run web` run; None for a folder scored by `web eval`)."""
    totals: WebTotals = Field(default_factory=WebTotals)
    """Cost, tokens and time."""
    min_clusters: int = MIN_CLUSTERS
    """Intervals over fewer clusters are marked; comparisons over fewer get no verdict."""
    evaluator: EvaluatorIdentity
    """The evaluator's version and checksums."""
    n_tasks: int
    """Distinct tasks."""
    n_attempts: int
    """Scored attempts (trials included)."""
    overall: Estimate
    """Pass rate over all tasks, CI resampling tasks."""
    macro: Estimate
    """Template macro average, CI resampling templates (n_clusters = templates)."""
    per_site: list[SiteStats]
    """One row per site."""
    failure_modes: FailureModes
    """Counts of agent and evaluator statuses."""
    unpassable: UnpassableView
    """Totals with and without unpassable tasks."""
    trials: TrialVariance
    """Variance across trials."""
    pass_k: TrialStats | None = None
    """pass@k and pass^k over trials (a trial succeeds when the evaluator scores it 1); None
    with one trial per task."""
    failing: list[FailingAttempt] = Field(default_factory=list)
    """Every attempt that did not pass, with the evaluator's expected and got values."""
    comparison: BaselineComparison | None = None
    """Against --baseline, when given."""
    failure_causes: CauseTable | None = None
    """Every attempt that did not pass by cause, against the baseline's
    (web/scorecard/causes.py)."""
    grading_noise: GradingNoise | None = None
    """What `eval RUN --repeat N` measured of the scoring's own noise (None: not measured)."""
    sequence: SequenceState | None = None
    """`run web --until-decided`: every look and why it stopped (None: not such a run)."""


def task_scores(rows: Iterable[TaskRow]) -> list[TaskScore]:
    """Rows folded by task id (trials together), by id."""
    grouped: dict[int, list[TaskRow]] = defaultdict(list)
    for row in rows:
        grouped[row.task_id].append(row)
    return [_fold(sorted(group, key=lambda r: r.trial)) for _, group in sorted(grouped.items())]


def _fold(rows: list[TaskRow]) -> TaskScore:
    first = rows[0]
    return TaskScore(task_id=first.task_id, sites=first.sites,
                     intent_template_id=first.intent_template_id, unpassable=first.unpassable,
                     scores=[r.score for r in rows])


def pass_rate(tasks: list[TaskScore]) -> Estimate:
    """sum(scores) / sum(trials), with a CI resampling tasks."""
    return proportion_ci([t.total for t in tasks], [len(t.scores) for t in tasks], "the pass rate")


def macro_average(tasks: list[TaskScore]) -> Estimate:
    """Mean over templates of the mean task score per template; the CI resamples templates."""
    by_template: dict[int, list[float]] = defaultdict(list)
    for task in tasks:
        by_template[task.intent_template_id].append(task.mean)
    return mean_ci([mean(scores) for _, scores in sorted(by_template.items())])


def build_report(summary: WebEvalSummary, baseline: WebEvalSummary | None = None) -> WebReport:
    """Every figure of a summary, compared with a baseline when given."""
    tasks = task_scores(summary.tasks)
    return WebReport(
        output_dir=summary.output_dir, evaluator=summary.evaluator, n_tasks=len(tasks),
        n_attempts=len(summary.tasks), overall=pass_rate(tasks), macro=macro_average(tasks),
        per_site=site_table(summary.tasks), failure_modes=failure_modes(summary.tasks),
        unpassable=unpassable_view(tasks), trials=trial_variance(tasks),
        pass_k=_pass_k(tasks), failing=failing_attempts(summary.tasks),
        totals=web_totals(summary.tasks), failure_causes=summary_causes(summary, baseline),
        comparison=compare(summary, baseline) if baseline is not None else None)


def _pass_k(tasks: list[TaskScore]) -> TrialStats | None:
    if max((len(t.scores) for t in tasks), default=0) < 2:
        return None
    return trial_stats({str(t.task_id): [s >= 1.0 for s in t.scores] for t in tasks},
                       "the evaluator scores it 1")


def failing_attempts(rows: list[TaskRow]) -> list[FailingAttempt]:
    """Attempts scored below 1, by task and trial."""
    return [FailingAttempt(task_id=r.task_id, trial=r.trial, status=str(r.status),
                           cause=r.cause, agent_status=r.agent_status, error_msg=r.error_msg,
                           mismatches=r.mismatches,
                           agent_error=r.metrics.agent_error if r.metrics else None)
            for r in sorted(rows, key=lambda r: (r.task_id, r.trial)) if r.score < 1.0]


def _cost(m: TaskMetrics) -> float | None:
    """An attempt's cost: unknown when it spent tokens and says no cost (never counted 0)."""
    spent = (m.tokens or 0) + (m.input_tokens or 0) + (m.output_tokens or 0)
    return m.cost_usd if m.cost_usd is not None or spent else 0.0


def web_totals(rows: list[TaskRow]) -> WebTotals:
    """Sums over the attempts' metrics.json (missing values count as 0)."""
    metrics = [r.metrics for r in rows if r.metrics is not None]

    def total(pick: Callable[[TaskMetrics], float | None]) -> float:
        return sum(v for v in (pick(m) for m in metrics) if v is not None)

    cost = CostSum.of(_cost(m) for m in metrics)
    return WebTotals(
        cost_usd=cost.partial_usd, cost_unknown=cost.unknown,
        input_tokens=int(total(lambda m: m.input_tokens if m.input_tokens is not None
                               else m.tokens)),
        output_tokens=int(total(lambda m: m.output_tokens)),
        cached_input_tokens=int(total(lambda m: m.cached_input_tokens)),
        steps=int(total(lambda m: m.steps)), agent_time_s=total(lambda m: m.duration_s))


def site_table(rows: list[TaskRow]) -> list[SiteStats]:
    """Per site: tasks, pass rate with CI, and average metrics."""
    by_site: dict[str, list[TaskRow]] = defaultdict(list)
    for row in rows:
        for site in row.sites:
            by_site[site].append(row)
    return [_site_stats(site, site_rows) for site, site_rows in sorted(by_site.items())]


def _site_stats(site: str, rows: list[TaskRow]) -> SiteStats:
    tasks = task_scores(rows)
    metrics = [r.metrics for r in rows if r.metrics is not None]
    return SiteStats(
        site=site, n_tasks=len(tasks), n_attempts=len(rows), pass_rate=pass_rate(tasks),
        avg_steps=_avg(metrics, lambda m: m.steps), avg_tokens=_avg(metrics, lambda m: m.tokens),
        avg_cost_usd=None if any(_cost(m) is None for m in metrics)
        else _avg(metrics, lambda m: m.cost_usd),
        avg_duration_s=_avg(metrics, lambda m: m.duration_s))


def _avg(metrics: list[TaskMetrics], pick: Callable[[TaskMetrics], float | None]) -> float | None:
    values = [v for v in (pick(m) for m in metrics) if v is not None]
    return mean(values) if values else None


def failure_modes(rows: list[TaskRow]) -> FailureModes:
    """Counts of agent statuses, evaluator statuses and error origins."""
    return FailureModes(
        cause=cause_counts([r.cause for r in rows]),
        agent_status=dict(Counter(r.agent_status for r in rows).most_common()),
        evaluator_status=dict(Counter(str(r.status) for r in rows).most_common()),
        error_origin=dict(Counter(str(r.error_origin) for r in rows
                                  if r.error_origin is not None).most_common()))


def unpassable_view(tasks: list[TaskScore]) -> UnpassableView:
    """Flagged tasks, and pass rate and macro average with and without them."""
    passable = [t for t in tasks if t.unpassable is None]
    flagged = [UnpassableTask(task_id=t.task_id, flag=t.unpassable, score=t.mean)
               for t in tasks if t.unpassable is not None]
    return UnpassableView(flagged=flagged, pass_rate_all=pass_rate(tasks),
                          pass_rate_excluding=pass_rate(passable), macro_all=macro_average(tasks),
                          macro_excluding=macro_average(passable))


def trial_variance(tasks: list[TaskScore]) -> TrialVariance:
    """Spread of scores across trials of the same task."""
    multi = [t for t in tasks if len(t.scores) > 1]
    max_trials = max((len(t.scores) for t in tasks), default=0)
    if not multi:
        return TrialVariance(n_tasks_with_trials=0, max_trials=max_trials)
    per_trial = {k + 1: mean(t.scores[k] for t in tasks if len(t.scores) > k)
                 for k in range(max_trials)}
    return TrialVariance(
        n_tasks_with_trials=len(multi), max_trials=max_trials,
        mean_within_task_std=mean(pstdev(t.scores) for t in multi),
        per_trial_pass_rate=per_trial, between_trial_std=pstdev(per_trial.values()),
        pass_all_trials=mean(float(min(t.scores) >= 1.0) for t in multi),
        pass_any_trial=mean(float(max(t.scores) >= 1.0) for t in multi))


def compare(current: WebEvalSummary, baseline: WebEvalSummary) -> BaselineComparison:
    """Paired by task id: the difference of pass rates with a CI, and the tasks that moved."""
    now = {t.task_id: t for t in task_scores(current.tasks)}
    before = {t.task_id: t for t in task_scores(baseline.tasks)}
    paired = sorted(now.keys() & before.keys())
    a = ([now[i].total for i in paired], [len(now[i].scores) for i in paired])
    b = ([before[i].total for i in paired], [len(before[i].scores) for i in paired])
    difference = paired_difference_ci(a, b)
    changes = [TaskChange(task_id=i, baseline=before[i].mean, current=now[i].mean)
               for i in paired if now[i].mean != before[i].mean]
    return BaselineComparison(
        baseline_dir=baseline.output_dir, n_paired=len(paired),
        only_current=sorted(now.keys() - before.keys()),
        only_baseline=sorted(before.keys() - now.keys()),
        current_pass_rate=_ratio(a), baseline_pass_rate=_ratio(b), difference=difference,
        verdict=judge(difference, "higher"), by_template=_by_template(now, before, paired),
        improved=[c for c in changes if c.current > c.baseline],
        regressed=[c for c in changes if c.current < c.baseline])


def _by_template(now: dict[int, TaskScore], before: dict[int, TaskScore],
                 paired: list[int]) -> Estimate:
    """The paired difference resampling templates: each template sums its paired tasks' scores
    and trials, on either side (the template is read from this folder's tasks)."""
    sums: dict[int, list[float]] = {}
    for i in paired:
        cell = sums.setdefault(now[i].intent_template_id, [0.0, 0.0, 0.0, 0.0])
        cell[0] += now[i].total
        cell[1] += len(now[i].scores)
        cell[2] += before[i].total
        cell[3] += len(before[i].scores)
    cells = list(sums.values())
    return paired_difference_ci(([c[0] for c in cells], [c[1] for c in cells]),
                                ([c[2] for c in cells], [c[3] for c in cells]))


def _ratio(pair: tuple[list[float], list[int]]) -> float:
    return sum(pair[0]) / sum(pair[1]) if sum(pair[1]) else math.nan


def pct(estimate: Estimate) -> str:
    """`62.5% [40.0, 85.0]`, or `-` when there is nothing to estimate."""
    if math.isnan(estimate.value):
        return "-"
    mark = FEW if few_clusters(estimate) else ""
    return (f"{100 * estimate.value:.1f}% [{100 * estimate.low:.1f}, "
            f"{100 * estimate.high:.1f}]{mark}")


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def render_markdown(report: WebReport) -> str:
    """The report as Markdown."""
    parts = [_md_header(report), _md_totals(report.totals), _md_sites(report),
             _md_failures(report.failure_modes), *_md_causes(report),
             _md_failing(report.failing),
             _md_unpassable(report.unpassable), _md_trials(report.trials, report.pass_k)]
    if report.comparison is not None:
        parts.append(_md_comparison(report.comparison))
    if report.sequence is not None:
        parts.append("\n".join(sequence_lines(report.sequence)).strip())
    parts.append(f"CIs: 95% percentile bootstrap resampling tasks (templates for the macro "
                 f"average). {FEW}: fewer than {report.min_clusters} tasks (or templates) "
                 "behind the interval, too few for it to be trusted (see docs/runs.md).")
    return "\n\n".join(parts) + "\n"


def _md_causes(report: WebReport) -> list[str]:
    """Failures by cause (issue 41's closed set) and, once measured, the scoring's noise."""
    spread = report.trials.between_trial_std
    parts = ["\n".join(cause_lines(report.failure_causes)).strip()] \
        if report.failure_causes else []
    noise = noise_lines(report.grading_noise, spread, "attempt")
    return [*parts, "\n".join(noise).strip()] if noise else parts


def _md_totals(totals: WebTotals) -> str:
    grading = "-" if totals.grading_time_s is None else f"{totals.grading_time_s:.1f}"
    return "\n".join([
        "## Totals", "", "| cost (USD) | tokens in | tokens out | tokens in, cached | steps | "
        "agent time (s) | grading time (s) |", "|---:|---:|---:|---:|---:|---:|---:|",
        f"| {format_cost(totals.cost_usd, totals.cost_unknown > 0, dollar=False)} | "
        f"{totals.input_tokens:,} | {totals.output_tokens:,} | "
        f"{totals.cached_input_tokens:,} | {totals.steps:,} | {totals.agent_time_s:.1f} | "
        f"{grading} |"])


def _md_failing(failing: list[FailingAttempt]) -> str:
    if not failing:
        return "## Failing tasks\n\nNone: every attempt passed."
    lines = ["## Failing tasks", ""]
    lines += [_failing_line(f) for f in failing[:MAX_FAILING_SHOWN]]
    if len(failing) > MAX_FAILING_SHOWN:
        lines.append(f"- ... and {len(failing) - MAX_FAILING_SHOWN} more (`--json`)")
    return "\n".join(lines)


def _failing_line(f: FailingAttempt) -> str:
    why = [f"{m.evaluator}{' ' + m.field if m.field else ''}: expected `{_code(m.expected)}`, "
           f"got `{_code(m.got)}`" for m in f.mismatches]
    if f.error_msg:
        why.append(f"error: {_code(f.error_msg)}")
    if f.agent_error:
        why.append(f"agent error: {_code(f.agent_error)}")
    return (f"- task {f.task_id} trial {f.trial}: {f.cause} ({f.status}, agent "
            f"{f.agent_status})"
            + (f"; {'; '.join(why)}" if why else ""))


def _code(text: str) -> str:
    return text.replace("`", "'").replace("\n", " ")


def _md_header(report: WebReport) -> str:
    ev = report.evaluator
    head = ([f"# benchwright report: web run {report.header.run_dir}", "",
             *header_lines(report.header)] if report.header is not None
            else [f"# Web tasks scored with WebArena Verified's evaluator: {report.output_dir}"])
    return "\n".join([
        *head, "",
        f"- tasks: {report.n_tasks} ({report.n_attempts} attempts)",
        f"- pass rate: {pct(report.overall)}",
        f"- template macro average: {pct(report.macro)} over {report.macro.n_clusters} templates",
        f"- evaluator: webarena-verified {ev.version}, code {ev.evaluator_checksum[:12]}, "
        f"data {ev.data_checksum[:12]}"])


def _md_sites(report: WebReport) -> str:
    lines = ["## Per site", "",
             "| site | tasks | pass rate [95% CI] | steps | tokens | cost $ | time s |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {s.site} | {s.n_tasks} | {pct(s.pass_rate)} | {_num(s.avg_steps)} | "
              f"{_num(s.avg_tokens, 0)} | {format_cost(s.avg_cost_usd, dollar=False)} | "
              f"{_num(s.avg_duration_s)} |"
              for s in report.per_site]
    return "\n".join(lines)


def _md_failures(modes: FailureModes) -> str:
    lines = ["## Failure modes", "", "| kind | value | attempts |", "|---|---|---:|"]
    for kind, counts in (("cause", modes.cause), ("agent status", modes.agent_status),
                         ("evaluator status", modes.evaluator_status),
                         ("error origin", modes.error_origin)):
        lines += [f"| {kind} | {name} | {n} |" for name, n in counts.items() if n]
    return "\n".join(lines)


def _md_unpassable(view: UnpassableView) -> str:
    flagged = ", ".join(f"{t.task_id} ({t.flag})" for t in view.flagged) or "none"
    return "\n".join([
        "## Unpassable tasks", "", f"Flagged here: {flagged}.", "",
        "| | all tasks | without unpassable |", "|---|---:|---:|",
        f"| pass rate | {pct(view.pass_rate_all)} | {pct(view.pass_rate_excluding)} |",
        f"| macro average | {pct(view.macro_all)} | {pct(view.macro_excluding)} |"])


def _md_trials(trials: TrialVariance, pass_k: TrialStats | None) -> str:
    if trials.n_tasks_with_trials == 0:
        return "## Trials\n\nOne trial per task: no variance across trials."
    return "\n".join([*_md_variance(trials), *_md_pass_k(pass_k)])


def _md_pass_k(stats: TrialStats | None) -> list[str]:
    if stats is None:
        return []
    return ["", *pass_k_lines(stats, "task", pct)]


def _md_variance(trials: TrialVariance) -> list[str]:
    per_trial = ", ".join(f"trial {k}: {100 * v:.1f}%" for k, v in
                          trials.per_trial_pass_rate.items())
    return [
        "## Trials", "", f"- tasks with several trials: {trials.n_tasks_with_trials} "
        f"(up to {trials.max_trials})", f"- per trial: {per_trial}",
        f"- std between trials: {_num(trials.between_trial_std, 3)}; mean std within a task: "
        f"{_num(trials.mean_within_task_std, 3)}",
        f"- passed in every trial: {_num(trials.pass_all_trials, 3)}; in at least one: "
        f"{_num(trials.pass_any_trial, 3)}"]


def _md_comparison(comp: BaselineComparison) -> str:
    moved = ", ".join(f"{c.task_id} ({c.baseline:g}->{c.current:g})"
                      for c in [*comp.regressed, *comp.improved]) or "none"
    return "\n".join([
        "## Against the baseline", "", f"Baseline: {comp.baseline_dir}; {comp.n_paired} tasks "
        f"paired ({len(comp.only_current)} only here, {len(comp.only_baseline)} only there).", "",
        f"- pass rate: {100 * comp.current_pass_rate:.1f}% now, "
        f"{100 * comp.baseline_pass_rate:.1f}% before",
        f"- difference: {_signed(comp.difference)} -> "
        f"**{verdict_text(comp.verdict, comp.difference.n_clusters, 'tasks', comp.difference)}"
        f"** (a verdict needs at least {MIN_CLUSTERS} paired tasks and a 95% CI that excludes "
        "zero)", *_md_by_template(comp),
        f"- only here: {_ids(comp.only_current)}; only in the baseline: "
        f"{_ids(comp.only_baseline)}",
        f"- tasks that moved: {moved}"])


def _md_by_template(comp: BaselineComparison) -> list[str]:
    """The difference with templates as the clusters (tasks of one template move together)."""
    diff = comp.by_template
    if diff is None:
        return []
    verdict = verdict_text(judge(diff, "higher"), diff.n_clusters, "templates", diff)
    return [f"- by template ({diff.n_clusters} templates resampled): {_signed(diff)} -> "
            f"**{verdict}**"]


def _ids(ids: list[int]) -> str:
    if not ids:
        return "none"
    return ", ".join(map(str, ids[:50])) + (f", ... ({len(ids)} in all)" if len(ids) > 50 else "")


def _signed(estimate: Estimate) -> str:
    if math.isnan(estimate.value):
        return "-"
    return (f"{100 * estimate.value:+.1f} points [{100 * estimate.low:+.1f}, "
            f"{100 * estimate.high:+.1f}]")
