"""The coding track's report: the run's identity and totals, solve rates, group pass rates,
per-checkpoint cost and time, with cluster-bootstrap CIs over problems, why attempts ended,
pass@k over trials, and a paired comparison against a baseline run."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from benchwright.coding.attempts.judging.summary import JudgeOverview, judge_overview
from benchwright.coding.attempts.models import CheckpointRecord, RunConfig, RunTotals
from benchwright.coding.attempts.tallies import ProblemTally
from benchwright.coding.attempts.totals import last_finished, run_totals
from benchwright.coding.problems.config import Group
from benchwright.coding.problems.source import ProblemSource
from benchwright.coding.report.counterfactual import CounterfactualReport, compare_starts
from benchwright.coding.report.failures import (
    AttemptFailure,
    CheckpointRules,
    attempt_errors,
    attempt_failure,
    checkpoint_failures,
    read_grading,
    rules_fired_on,
)
from benchwright.coding.report.refine_causes import run_causes
from benchwright.coding.report.scored_run import Picker, ScoredRun
from benchwright.coding.report.sources import source_lines
from benchwright.report_parts.failure_causes import CauseTable
from benchwright.report_parts.frontier import Frontier
from benchwright.report_parts.grading_noise import GradingNoise, read_noise
from benchwright.report_parts.header import RunHeader
from benchwright.report_parts.sequence import read_sequence
from benchwright.report_parts.trials import TrialStats, trial_stats
from benchwright.stats.estimates import (
    MIN_CLUSTERS,
    Direction,
    Estimate,
    Verdict,
    judge,
    mde,
    paired_difference_ci,
    proportion_ci,
    ratio_ci,
)
from benchwright.stats.sequential import SequenceState

OptionalPicker = Callable[[CheckpointRecord], float | None]


class Metric(BaseModel):
    """One figure of the report."""

    name: str
    """What it measures."""
    estimate: Estimate
    """Its value and 95% CI."""


class Comparison(BaseModel):
    """A figure against the baseline run, on the problems both ran."""

    name: str
    """What it measures."""
    difference: Estimate
    """This run minus the baseline, with a paired 95% CI (n_clusters: problems paired)."""
    better: Direction
    """Which way is better for this figure."""
    verdict: Verdict
    """regression / improvement only with at least MIN_CLUSTERS paired problems and a CI
    that excludes zero, read in the figure's good direction."""
    mde: float | None = None
    """The smallest difference this comparison could have detected at 80% power, in the
    figure's unit (stats.mde; None when the interval is unknown)."""


class CheckpointRow(BaseModel):
    """Figures for the n-th checkpoint of every problem that reached it."""

    index: int
    """The checkpoint's position, from 1."""
    n: int
    """Attempts that reached it."""
    metrics: list[Metric]
    """Solve rate, cost, tokens, agent and grading time."""
    unknown: list[str] = []
    """Figures left out because some values are unknown (the cost of a model with no price):
    shown as unknown, never as a mean of the known ones."""


class ProblemRow(BaseModel):
    """One attempt, checkpoint by checkpoint."""

    problem: str
    """The problem."""
    trial: int
    """The trial."""
    cells: list[str]
    """Per checkpoint: `solved`, `passed` (policy held), `failed`, `infra` (the provider
    failed: not graded), `no reference` (a reference start with no reference solution of the
    checkpoint before: not attempted), or `-` (not reached)."""


class ProblemQuality(BaseModel):
    """How SCBench's figures moved over one problem's checkpoints (`TREND`)."""

    problem: str
    """The problem."""
    metrics: list[Metric]
    """Each trend figure, its trials as clusters (one trial: no interval)."""


class InfraErrorRow(BaseModel):
    """An attempt stopped by an infrastructure error, and so left out of every score."""

    problem: str
    """The problem."""
    trial: int
    """The trial."""
    checkpoint: str
    """The checkpoint that could not be run."""
    attempts: int
    """Times the agent was started on it."""
    error: str | None
    """What failed."""


class CodingReport(BaseModel):
    """`benchwright report --json` for a coding run."""

    format: Literal["benchwright.report_parts/2"] = "benchwright.report_parts/2"
    """The file's format and version (2: header, totals, failures, trials, unpaired
    problems, directions)."""
    run_dir: Path
    """The run reported."""
    header: RunHeader
    """The run's identity."""
    totals: RunTotals
    """Cost, tokens and time, summed over the run."""
    min_clusters: int = MIN_CLUSTERS
    """Intervals over fewer problems are marked; comparisons over fewer get no verdict."""
    agent: str
    """The run's agent."""
    model: str | None
    """The run's model."""
    n_problems: int
    """Problems in the run."""
    n_trials: int
    """Trials per problem."""
    solve_rates: list[Metric]
    """Checkpoints solved, iso-solved, core-solved; problems solved and partial."""
    group_pass_rates: list[Metric]
    """Passed / total tests per group."""
    per_checkpoint: list[CheckpointRow]
    """Cost, tokens, time, erosion and verbosity by checkpoint position."""
    quality: list[Metric] = Field(default_factory=list)
    """Code quality means over graded checkpoints (erosion, verbosity, churn, ...)."""
    quality_by_problem: list[ProblemQuality] = Field(default_factory=list)
    """Per problem, how SCBench's erosion and verbosity moved from checkpoint to checkpoint."""
    problems: list[ProblemRow]
    """Every attempt."""
    infra_errors: list[InfraErrorRow] = Field(default_factory=list)
    """Attempts stopped by infrastructure errors (not in the scores; `--resume` redoes them)."""
    failures: list[AttemptFailure] = Field(default_factory=list)
    """Every attempt that ended before its last checkpoint: where and why."""
    rules_fired: list[CheckpointRules] = Field(default_factory=list)
    """Every checkpoint on which a grading rule fired (passed or not), with what it saw."""
    trials: TrialStats | None = None
    """pass@k, pass^k and the spread across trials (a trial succeeds when the problem is
    solved); None with one trial."""
    baseline: Path | None = None
    """The baseline run, if any."""
    n_paired: int = 0
    """Problems scored in both runs (the comparison's clusters)."""
    only_run: list[str] = Field(default_factory=list)
    """Problems scored in this run only (left out of the comparison)."""
    only_baseline: list[str] = Field(default_factory=list)
    """Problems scored in the baseline only (left out of the comparison)."""
    comparisons: list[Comparison] = Field(default_factory=list)
    """Paired differences against the baseline."""
    problem_sources: dict[str, ProblemSource] = Field(default_factory=dict)
    """Each problem's origin, commit and content hash, as the manifest recorded them."""
    judge: JudgeOverview | None = None
    """The LLM judge: checkpoints judged, errors, cost, the samples' agreement (None: not
    judged)."""
    counterfactual: CounterfactualReport | None = None
    """Chain against reference starts (`--counterfactual RUN2`), when asked for."""
    sequence: SequenceState | None = None
    """How an `--until-decided` run went: every look, and when and why it stopped (None: not
    run so)."""
    frontier: Frontier | None = None
    """This run among others on the cost-accuracy frontier (`--frontier RUNS`), when asked
    for (`benchwright.frontier` gives the same)."""
    failure_causes: CauseTable | None = None
    """Every failed checkpoint by cause, against the baseline's (coding/report/causes.py)."""
    grading_noise: GradingNoise | None = None
    """What `eval RUN --repeat N` measured of the grader's own noise (None: not measured)."""




Inputs = dict[str, tuple[list[float], list[float]]]


def _solve_rate_inputs(run: ScoredRun, problems: list[str]) -> Inputs:
    return tally_inputs([run.tally(p) for p in problems])


def tally_inputs(tallies: list[ProblemTally]) -> Inputs:
    """The solve rates' (numerators, denominators), one cluster per problem."""
    planned = [float(t.planned) for t in tallies]
    attempts = [float(t.attempts) for t in tallies]
    return {"checkpoints solved": ([float(t.solved) for t in tallies], planned),
            "checkpoints iso-solved": ([float(t.iso_solved) for t in tallies], planned),
            "checkpoints core-solved": ([float(t.core_solved) for t in tallies], planned),
            "problems solved": ([float(t.attempts_solved) for t in tallies], attempts),
            "problems partial": ([float(t.attempts_partial) for t in tallies], attempts)}


def solve_rate_metrics(tallies: list[ProblemTally]) -> list[Metric]:
    """Checkpoints solved, iso-solved, core-solved; problems solved and partial, with 95% CIs
    (report.md's first table; the viewer's overview reads the same tallies)."""
    return [Metric(name=k, estimate=proportion_ci(*v, what=k))
            for k, v in tally_inputs(tallies).items()]


def _passed_in(group: Group) -> Picker:
    return lambda r: float(r.counts[group].passed) if group in r.counts else 0.0


def _total_in(group: Group) -> Callable[[str, list[CheckpointRecord]], float]:
    return lambda _p, records: float(sum(r.counts[group].total for r in records
                                         if group in r.counts))


def _group_inputs(run: ScoredRun, problems: list[str]) -> Inputs:
    inputs = {}
    for group in Group:
        num, den = run.clusters(problems, _passed_in(group), _total_in(group))
        if sum(den):
            inputs[f"{group} tests passed"] = (num, den)
    return inputs


def _quality(key: str) -> OptionalPicker:
    return lambda r: r.quality.values.get(key) if r.quality else None


def _quality_delta(key: str) -> OptionalPicker:
    return lambda r: r.quality.delta.get(key) if r.quality and r.quality.delta else None


def _increased(key: str) -> OptionalPicker:
    """1 when the figure rose since the previous checkpoint, 0 when not; None when either is
    unknown (a mean of it is the share of checkpoints where it rose)."""
    def pick(r: CheckpointRecord) -> float | None:
        change = _quality_delta(key)(r)
        return None if change is None else float(change > 0)
    return pick


_COST = "cost (USD)"
_PER_CHECKPOINT: dict[str, OptionalPicker] = {
    "solved rate": lambda r: float(r.solved),
    _COST: lambda r: r.agent.usage.cost_usd,
    "tokens": lambda r: float(r.agent.usage.input_tokens + r.agent.usage.output_tokens),
    "agent time (s)": lambda r: r.agent.duration_s,
    "grading time (s)": lambda r: r.grade_duration_s,
    "erosion": _quality("erosion"),
    "verbosity": _quality("verbosity"),
    "cognitive erosion": _quality("cog_erosion"),
    "erosion change": _quality_delta("erosion"),
    "verbosity change": _quality_delta("verbosity"),
    "churn ratio": lambda r: r.quality.churn_ratio if r.quality and r.index > 1 else None,
    "rubric flags per LOC": _quality("rubric_per_loc"),
}
# Run-level code quality: means over every graded checkpoint that has metrics. `erosion`,
# `verbosity` and `cognitive erosion` are SCBench's (scb-check's); a checkpoint where they are
# unknown is left out, never counted as 0.
_QUALITY: dict[str, OptionalPicker] = {
    "erosion": _quality("erosion"),
    "verbosity": _quality("verbosity"),
    "cognitive erosion": _quality("cog_erosion"),
    "verbosity change per checkpoint": _quality_delta("verbosity"),
    "cognitive erosion change per checkpoint": _quality_delta("cog_erosion"),
    "checkpoints where erosion increased (share)": _increased("erosion"),
    "checkpoints where verbosity increased (share)": _increased("verbosity"),
    "benchwright verbosity composite": _quality("bw_verbosity"),
    "benchwright erosion composite": _quality("bw_erosion"),
    "LOC": _quality("loc"),
    "CC high callables": _quality("cc_high"),
    "ruff findings": _quality("lint"),
    "ast-grep findings": _quality("astgrep"),
    "clone ratio": _quality("clone_ratio"),
    "churn ratio (from checkpoint 2)": lambda r: r.quality.churn_ratio
    if r.quality and r.index > 1 else None,
    "erosion change per checkpoint": _quality_delta("erosion"),
    "LOC change per checkpoint": _quality_delta("loc"),
    # the LLM judge's (only with judged checkpoints: a metric without values is left out)
    "rubric flags": _quality("rubric_total_flags"),
    "rubric flags per LOC": _quality("rubric_per_loc"),
    "new rubric flags per LOC (from checkpoint 2)": lambda r: r.quality.values.get(
        "new_violations_per_loc") if r.quality and r.index > 1 else None,
    "rubric flags carried over": _quality("rubric_carried_over"),
    "rubric verbosity flags": _quality("rubric_verbosity_flags"),
    "rubric erosion flags": _quality("rubric_erosion_flags"),
}


def _any_unknown_cost(records: Iterable[CheckpointRecord]) -> bool:
    return any(r.agent.usage.cost_usd is None for r in records)


def _mean_metric(name: str, pick: OptionalPicker,
                 groups: dict[str, list[CheckpointRecord]]) -> Metric | None:
    """Mean of the picked value over records, with problems as clusters; None if no values."""
    num, den = [], []
    for records in groups.values():
        values = [v for v in (pick(r) for r in records) if v is not None]
        if values:
            num.append(float(sum(values)))
            den.append(float(len(values)))
    return Metric(name=name, estimate=ratio_ci(num, den)) if den else None


# SCBench's headline: per problem, the per-checkpoint change and whether it was a rise.
TREND: dict[str, OptionalPicker] = {
    "erosion change": _quality_delta("erosion"),
    "verbosity change": _quality_delta("verbosity"),
    "erosion increased": _increased("erosion"),
    "verbosity increased": _increased("verbosity"),
}


def _quality_by_problem(run: ScoredRun) -> list[ProblemQuality]:
    """TREND per problem, its trials as clusters; problems with no known change left out."""
    found = []
    for problem in run.scored_problems():
        trials = {f"{p}/{t}": records for (p, t), records in run.chains.items() if p == problem}
        metrics = [m for m in (_mean_metric(n, pick, trials) for n, pick in TREND.items())
                   if m is not None]
        if metrics:
            found.append(ProblemQuality(problem=problem, metrics=metrics))
    return found


def _quality_metrics(run: ScoredRun) -> list[Metric]:
    groups: dict[str, list[CheckpointRecord]] = {}
    for (problem, _t), records in run.chains.items():
        groups.setdefault(problem, []).extend(records)
    found = (_mean_metric(name, pick, groups) for name, pick in _QUALITY.items())
    return [m for m in found if m is not None]


def _checkpoint_rows(run: ScoredRun, problems: list[str]) -> list[CheckpointRow]:
    rows = []
    longest = max((run.size(p) for p in problems), default=0)
    for index in range(1, longest + 1):
        at: dict[str, list[CheckpointRecord]] = {}
        for (problem, _t), records in run.chains.items():
            at.setdefault(problem, []).extend(r for r in records if r.index == index)
        reached = [p for p in problems if at.get(p)]
        if not reached:
            continue
        unknown = [_COST] if _any_unknown_cost(r for p in reached for r in at[p]) else []
        found = (_mean_metric(name, pick, {p: at[p] for p in reached})
                 for name, pick in _PER_CHECKPOINT.items() if name not in unknown)
        metrics = [m for m in found if m is not None]
        rows.append(CheckpointRow(index=index, n=sum(len(at[p]) for p in reached),
                                  metrics=metrics, unknown=unknown))
    return rows


def _problem_rows(run: ScoredRun) -> list[ProblemRow]:
    rows = []
    for (problem, trial), records in run.all_chains.items():
        by_name = {r.checkpoint: r for r in records}
        infra = run.infra.get((problem, trial))
        cells = [_cell(by_name.get(name), name in run.no_reference(problem),
                       infra is not None and infra.checkpoint == name)
                 for name in run.manifest.problem_checkpoints.get(problem, [])]
        rows.append(ProblemRow(problem=problem, trial=trial, cells=cells))
    return rows


def _cell(record: CheckpointRecord | None, no_reference: bool, infra: bool) -> str:
    if record is not None:
        return "solved" if record.solved else ("passed" if record.passed else "failed")
    return "no reference" if no_reference else ("infra" if infra else "-")


def build_report(run_dir: Path, baseline_dir: Path | None = None,
                 counterfactual_dir: Path | None = None) -> CodingReport:
    """The report of a run, optionally compared with a baseline run and with a run of the
    other `--start-from` (see `counterfactual.compare_starts`)."""
    run = ScoredRun(run_dir)
    problems = run.scored_problems()
    report = CodingReport(
        run_dir=run_dir, header=_header(run), totals=_totals(run),
        agent=run.manifest.config.agent, model=run.manifest.config.model,
        n_problems=len(problems), n_trials=run.manifest.config.trials,
        solve_rates=solve_rate_metrics([run.tally(p) for p in problems]),
        group_pass_rates=[Metric(name=k, estimate=proportion_ci(*v, what=k))
                          for k, v in _group_inputs(run, problems).items()],
        per_checkpoint=_checkpoint_rows(run, problems), problems=_problem_rows(run),
        quality=_quality_metrics(run), quality_by_problem=_quality_by_problem(run),
        infra_errors=[InfraErrorRow(problem=e.problem, trial=e.trial, checkpoint=e.checkpoint,
                                    attempts=e.attempts, error=e.agent.error)
                      for e in run.infra.values()],
        failures=_failures(run), trials=_trials(run), rules_fired=_rules_fired(run),
        judge=judge_overview(run_dir, run.manifest.config),
        problem_sources=run.manifest.problem_sources, sequence=read_sequence(run_dir),
    )
    report.failure_causes = run_causes(run_dir, baseline_dir)
    report.grading_noise = read_noise(run_dir)
    if baseline_dir is not None:
        _add_comparison(report, run, ScoredRun(baseline_dir), baseline_dir)
    if counterfactual_dir is not None:
        report.counterfactual = compare_starts(run_dir, counterfactual_dir)
    return report


def _header(run: ScoredRun) -> RunHeader:
    config = run.manifest.config
    graders = (read_grading(run.layout.checkpoint_dir(p, t, records[-1].checkpoint))
               for (p, t), records in run.all_chains.items() if records)
    versions = sorted({g.grader.benchwright_version for g in graders if g is not None})
    return RunHeader(
        track="coding", run_dir=run.dir, suite=str(config.problems_dir),
        problems=list(config.problems), unit="problem", agent=config.agent, model=config.model,
        prompt=config.prompt, policy=str(config.pass_policy), trials=config.trials,
        start_from=str(config.start_from),
        created_at=run.manifest.created_at,
        finished_at=last_finished(r for records in run.all_chains.values() for r in records),
        benchwright_version=run.manifest.benchwright_version, grader_versions=versions,
        runtime=_runtime_line(config), sources=source_lines(run.manifest.problem_sources),
        model_traffic=config.llm.describe() if config.llm else None)


def _runtime_line(config: RunConfig) -> str | None:
    """The container runtime and its image, for the header (None for bubblewrap)."""
    if config.image_id is None or config.unsafe_no_sandbox:
        return None
    return f"{config.runtime}, image `{config.image or 'default grading image'}` " \
        f"(`{config.image_id}`)"


def _totals(run: ScoredRun) -> RunTotals:
    return run_totals((r for records in run.all_chains.values() for r in records),
                      run.infra.values())


def _failures(run: ScoredRun) -> list[AttemptFailure]:
    """Chain starts: where each attempt ended early. Reference starts go on past a failure:
    each failed checkpoint, then where an attempt stopped short, if it did."""
    broken = attempt_errors(run.layout.result_json)
    found: list[AttemptFailure | None] = []
    for (p, t), records in run.all_chains.items():
        chain_dir = run.layout.chain_dir(p, t)
        planned = [c for c in run.manifest.problem_checkpoints.get(p, [])
                   if c not in run.no_reference(p)]
        if run.reference_start:
            found += checkpoint_failures(p, t, chain_dir, records)
        found.append(attempt_failure(p, t, chain_dir, records, run.infra.get((p, t)), planned,
                                     broken.get((p, t)), stops_at_failure=not run.reference_start))
    return [f for f in found if f is not None]


def _rules_fired(run: ScoredRun) -> list[CheckpointRules]:
    return [found for (p, t), records in run.all_chains.items()
            for found in rules_fired_on(p, t, run.layout.chain_dir(p, t), records)]


def _trials(run: ScoredRun) -> TrialStats | None:
    if run.manifest.config.trials < 2:
        return None
    outcomes: dict[str, list[bool]] = {}
    for (problem, _trial), records in sorted(run.chains.items()):
        outcomes.setdefault(problem, []).append(
            len(records) == run.size(problem) > 0 and all(r.solved for r in records))
    return trial_stats(outcomes, "every checkpoint of the problem is solved")


_BETTER: dict[str, Direction] = {"problems partial": "none", "cost (USD) per attempt": "lower"}


def _add_comparison(report: CodingReport, run: ScoredRun, base: ScoredRun,
                    baseline_dir: Path) -> None:
    ours_all, theirs_all = run.scored_problems(), base.scored_problems()
    shared = [p for p in ours_all if p in theirs_all]
    report.baseline = baseline_dir
    report.n_paired = len(shared)
    report.only_run = [p for p in ours_all if p not in theirs_all]
    report.only_baseline = [p for p in theirs_all if p not in ours_all]
    report.comparisons = _compare(run, base, shared)


def _comparison_inputs(run: ScoredRun, shared: list[str]) -> Inputs:
    inputs = _solve_rate_inputs(run, shared) | _group_inputs(run, shared)
    if _any_unknown_cost(r for chain in run.chains.values() for r in chain):
        return inputs  # an unknown cost is not compared (nor counted as 0)
    cost, _den = run.clusters(shared, lambda r: r.agent.usage.cost_usd or 0.0,
                              lambda _p, _r: 0.0)
    inputs["cost (USD) per attempt"] = (cost, inputs["problems solved"][1])
    return inputs


def _compare(run: ScoredRun, base: ScoredRun, shared: list[str]) -> list[Comparison]:
    ours, theirs = _comparison_inputs(run, shared), _comparison_inputs(base, shared)
    comparisons = []
    for name in [n for n in ours if n in theirs]:
        diff = paired_difference_ci(ours[name], theirs[name])
        better = _BETTER.get(name, "higher")
        comparisons.append(Comparison(name=name, difference=diff, better=better,
                                      verdict=judge(diff, better), mde=mde(diff)))
    return comparisons
