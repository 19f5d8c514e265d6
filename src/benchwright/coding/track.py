"""The coding track as the run kernel sees it (`benchwright.protocols.Track`): a run folder of
checkpoint journals, finished into result.json and report.md, re-graded by `eval RUN_DIR`.
`benchwright.runs.start` drives its runs through the steps below; the track writes its
report.md here, above the run loop (`runs/`) and the report (`report_parts/`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from benchwright.coding.attempts.models import ChainSummary, Manifest, RunConfig, RunResult
from benchwright.coding.attempts.regrade import VerdictChange, regrade_run
from benchwright.coding.attempts.runner import (
    check_journals,
    create_run,
    finish,
    load_manifest,
    refresh_checksums,
    saved_attempts,
)
from benchwright.coding.attempts.runner import (
    execute as execute_attempts,
)
from benchwright.errors import PrerequisiteError, UserInputError
from benchwright.protocols import (
    ClusterCounts,
    RegradeSettings,
    StartedRun,
    Track,
)
from benchwright.report_parts.grading_noise import GradingNoise, save_noise

if TYPE_CHECKING:
    from benchwright.coding.report.figures import CodingReport
    from benchwright.judge.models import JudgeSettings

PlanCounts = dict[tuple[str, int], tuple[int, int]]


def _ignore(_: Any) -> None:
    return None


@dataclass
class CodingHooks:
    """What the caller hears while a coding run goes on (the CLI draws its progress bar)."""

    on_plan: Callable[[PlanCounts], None] = _ignore
    """Each attempt's (checkpoints already done, checkpoints to run), once, before work."""
    on_event: Callable[[Any], None] = _ignore
    """A `CheckpointRecord` (a checkpoint journaled) or an `InfraErrorRecord`, as it happens."""
    on_summary: Callable[[ChainSummary], None] = _ignore
    """An attempt (problem x trial) ended."""
    on_report: Callable[[CodingReport], None] = _ignore
    """The run's report, once report.md is written."""


class Regraded(BaseModel):
    """What `eval RUN_DIR` did to a coding run."""

    changes: list[VerdictChange]
    """Every verdict that changed."""
    result: RunResult
    """The run's result, rewritten (report.md too)."""
    noise: GradingNoise | None = None
    """With `--repeat N` above 1: the grader's noise measured (also in grading_noise.json)."""


class CodingTrack:
    """Coding runs: `benchwright run coding`."""

    name = "coding"
    noun = "run"  # as its messages have always said
    command = "benchwright run coding"

    def node_checks(self, config: RunConfig) -> list[Callable[[], object]]:
        """What a machine running attempts needs (sandbox, interpreters, agent tools)."""
        from benchwright.coding.attempts.preflight import node_checks

        return node_checks(config)

    def create(self, run_dir: Path, config: RunConfig) -> Manifest:
        """A new run folder for a `RunConfig`."""
        return create_run(config, run_dir)

    def resumed(self, run_dir: Path) -> RunConfig:
        """The saved configuration, with what it needs still there (judge, metric tools)."""
        from benchwright.coding.attempts.preflight import check_resumable

        config = load_manifest(run_dir).config
        check_resumable(config)
        check_run_tools(config)
        return config

    def refresh(self, run_dir: Path) -> Manifest:
        """The problems as they are now recorded (edited specs invalidate checkpoints)."""
        manifest = refresh_checksums(run_dir, load_manifest(run_dir))
        check_journals(run_dir, manifest.config)  # an edited line: refused before any work
        return manifest

    def sweep(self, run_dir: Path) -> None:
        """What a killed predecessor left: scratch folders holding hidden tests."""
        from benchwright.coding.attempts.layout import RunLayout
        from benchwright.coding.grading.scratch import sweep_leftovers

        sweep_leftovers(RunLayout(run_dir).grading_dir)
        sweep_leftovers()

    def execute(self, run: StartedRun[RunConfig]) -> RunResult:
        """Every checkpoint not yet journaled; then result.json and report.md."""
        hooks = run.hooks if run.hooks is not None else CodingHooks()
        # on an executor without the run folder, this process journals the records it is sent
        result = execute_attempts(run.run_dir, run.config, run.executor,
                                  on_summary=hooks.on_summary, on_plan=hooks.on_plan,
                                  on_record=hooks.on_event)
        from benchwright.coding.report.run_report import write_run_report

        hooks.on_report(write_run_report(run.run_dir, result))
        return result

    def outcome(self, run_dir: Path, result: Any) -> str:
        """Checkpoints solved, and where the result files are."""
        return (f"{result.n_checkpoints_solved}/{result.n_checkpoints_planned} checkpoints "
                f"solved; result.json and report.md in {run_dir}")

    def read(self, run_dir: Path) -> Manifest:
        """The run's manifest."""
        return load_manifest(run_dir)

    def finish(self, run_dir: Path) -> RunResult:
        """result.json and report.md from the journals as they are."""
        config = load_manifest(run_dir).config
        from benchwright.coding.report.run_report import write_run_report

        result = finish(run_dir, config, saved_attempts(run_dir, config))
        write_run_report(run_dir, result)
        return result

    def regrade(self, run_dir: Path, settings: RegradeSettings) -> Regraded:
        """Grade every saved snapshot again; journals, result.json and report.md rewritten."""
        from benchwright.coding.report.run_report import write_run_report

        tell = settings.progress or (lambda _line: None)
        if settings.repeat > 1:
            from benchwright.coding.attempts.repeat import repeat_regrade

            noise, changes, result = repeat_regrade(
                run_dir, settings.repeat, lambda s: tell(f"re-grading {s}"), settings.executor)
            save_noise(run_dir, noise)
            write_run_report(run_dir, result)
            return Regraded(changes=changes, result=result, noise=noise)
        changes, result = regrade_run(run_dir, on_checkpoint=lambda s: tell(f"re-grading {s}"),
                                      executor=settings.executor)
        write_run_report(run_dir, result)
        return Regraded(changes=changes, result=result)

    def report(self, run_dir: Path, baseline: Path | None) -> CodingReport:
        """Solve rates, pass rates by group, cost and time with 95% CIs."""
        from benchwright.coding.report.figures import build_report

        return build_report(run_dir, baseline)

    def render(self, report: CodingReport) -> str:
        """report.md's text (without the errors section result.json feeds)."""
        from benchwright.coding.report.markdown import render_markdown

        return render_markdown(report)

    def resume_command(self, run_dir: Path) -> str:
        """How to continue the run."""
        return f"benchwright run coding --resume {run_dir}"

    def clusters(self, run_dir: Path, metric: str | None) -> ClusterCounts:
        """Problems solved (every checkpoint of an attempt) or checkpoints solved, per
        problem."""
        from benchwright.coding.report.scored_run import ScoredRun

        if metric not in (None, "problems solved", "checkpoints solved"):
            raise UserInputError(f"a coding run has no {metric!r}", path=run_dir,
                                 hint="use problems solved or checkpoints solved")
        run = ScoredRun(run_dir)
        tallies = [run.tally(p) for p in run.scored_problems()]
        if metric == "checkpoints solved":
            counts = {t.problem: (float(t.solved), float(t.planned)) for t in tallies}
        else:
            counts = {t.problem: (float(t.attempts_solved), float(t.attempts)) for t in tallies}
        return ClusterCounts(metric or "problems solved", "problems", counts)

    def export_atif(self, run_dir: Path, out: Path, redactor: Any) -> BaseModel:
        """Each checkpoint's agent session found in the run."""
        from benchwright.coding.agents.atif import export_run

        return export_run(run_dir, out, redactor)

    def interrupted(self, run_dir: Path) -> str:
        """Every journaled checkpoint stays."""
        return "interrupted; nothing finished is lost"


def check_run_tools(config: RunConfig) -> None:
    """The metric tools (metrics on) and the judge (one asked for) a run needs, there."""
    if config.metrics:
        require_metric_tools()
    check_judge(config.judge)


def check_judge(settings: JudgeSettings | None) -> None:
    """A judge asked for can be reached with what it was given (key, rubric, templates)."""
    if settings is not None:
        from benchwright.judge.session import check_judge

        check_judge(settings)


def require_metric_tools() -> None:
    """Refuse a run with metrics on when the metric tools are not installed."""
    from benchwright.metrics.tools import versions

    try:
        versions()
    except PrerequisiteError as exc:
        raise PrerequisiteError(exc.message, hint=f"{exc.hint}, or pass --no-metrics") from None


TRACK: Track[RunConfig, Manifest, RunResult, CodingReport] = CodingTrack()
