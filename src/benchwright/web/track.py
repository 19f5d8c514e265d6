"""The web track as the run kernel sees it (`benchwright.protocols.Track`): a run folder of trial
journals, scored offline by the official evaluator into result.json and report.md.
`benchwright.runs.start` drives its runs through the steps below."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchwright.errors import UserInputError
from benchwright.protocols import (
    ClusterCounts,
    RegradeSettings,
    StartedRun,
    Track,
)
from benchwright.report_parts.grading_noise import GradingNoise, save_noise
from benchwright.web.evaluation.scoring import WebEvalSummary
from benchwright.web.scorecard.figures import WebReport
from benchwright.web.trials.models import WebManifest, WebRunConfig, WebRunResult


class Rescored(BaseModel):
    """What `eval RUN_DIR` did to a web run."""

    result: WebRunResult
    """The run's result, rewritten (report.md too)."""
    summary: WebEvalSummary
    """Every trial's verdict."""
    report: WebReport
    """The statistics of report.md."""
    noise: GradingNoise | None = None
    """With `--repeat N` above 1: the scoring's noise measured (also in grading_noise.json)."""


class WebTrack:
    """Web runs: `benchwright run web`."""

    name = "web"
    noun = "web run"
    command = "benchwright run web"

    def node_checks(self, config: WebRunConfig) -> list[Callable[[], object]]:
        """What a machine running trials needs (Chromium, the agent's packages)."""
        from benchwright.web.trials.runner import node_checks

        return node_checks(config)

    def create(self, run_dir: Path, config: WebRunConfig) -> WebManifest:
        """A new run folder for a `WebRunConfig` (its suite opened by name)."""
        from benchwright.web.trials.runner import create_web_run
        from benchwright.web.trials.suites import open_suite

        return create_web_run(config, run_dir, open_suite(config.suite, config.env_config))

    def resumed(self, run_dir: Path) -> WebRunConfig:
        """The saved configuration, its credentials back from the environment; the folders
        trials go into must still be folders (changed by hand: one line)."""
        from benchwright.web.trials.layout import WebRunLayout
        from benchwright.web.trials.runner import load_web_manifest, require_kinds
        from benchwright.web.trials.sweep import restored

        manifest = load_web_manifest(run_dir)
        require_kinds(WebRunLayout(run_dir), manifest)
        return restored(manifest.config)

    def refresh(self, run_dir: Path) -> WebManifest:
        """The manifest as saved (the sites' URLs are recorded as the suite opens)."""
        return self.read(run_dir)

    def sweep(self, run_dir: Path) -> None:
        """Nothing before the suite opens: a trial's leftovers are swept as it starts again."""

    def execute(self, run: StartedRun[WebRunConfig]) -> WebRunResult:
        """Every trial not yet journaled (site workers decide the parallelism), then scoring."""
        from benchwright.web.trials.runner import RunHooks, execute_web_run

        hooks = run.hooks if run.hooks is not None else RunHooks()
        try:
            return execute_web_run(run.run_dir, hooks, config=run.config,
                                   executor=run.executor)
        except KeyboardInterrupt:
            hooks.stop.set()  # trials still running stop at their next step
            raise

    def outcome(self, run_dir: Path, result: Any) -> str:
        """Trials passed, and where the result files are."""
        return (f"{result.n_passed}/{result.n_trials} trials passed; result.json and report.md "
                f"in {run_dir}")

    def read(self, run_dir: Path) -> WebManifest:
        """The run's manifest."""
        from benchwright.web.trials.runner import load_web_manifest

        return load_web_manifest(run_dir)

    def finish(self, run_dir: Path) -> WebRunResult:
        """Score the trials (verdicts whose inputs did not change are reused), write result.json
        and report.md."""
        from benchwright.web.trials.runner import finish

        return finish(run_dir).result

    def regrade(self, run_dir: Path, settings: RegradeSettings) -> Rescored:
        """Score every trial again offline (against `settings.config`'s site URLs if given)."""
        from benchwright.web.trials.runner import finish

        if settings.repeat > 1:
            return _rescored_repeatedly(run_dir, settings)
        scored = finish(run_dir, settings.progress, force=True, config=settings.config)
        return Rescored(result=scored.result, summary=scored.summary, report=scored.report)

    def report(self, run_dir: Path, baseline: Path | None) -> WebReport:
        """Pass rates per site and template, failure modes, pass@k, with 95% CIs."""
        from benchwright.web.evaluation.scoring import load_summary
        from benchwright.web.scorecard.figures import build_report
        from benchwright.web.trials.layout import WebRunLayout
        from benchwright.web.trials.report_identity import saved_grading_time, with_identity

        manifest = self.read(run_dir)  # a damaged manifest is named before scores are read
        before = load_summary(_tasks_dir(baseline)) if baseline is not None else None
        summary = load_summary(WebRunLayout(run_dir).tasks_dir)
        return with_identity(build_report(summary, before), run_dir, manifest, summary,
                             saved_grading_time(run_dir))

    def render(self, report: WebReport) -> str:
        """report.md's text."""
        from benchwright.web.scorecard.figures import render_markdown

        return render_markdown(report)

    def resume_command(self, run_dir: Path) -> str:
        """How to continue the run."""
        return f"benchwright run web --resume {run_dir}"

    def clusters(self, run_dir: Path, metric: str | None) -> ClusterCounts:
        """The pass rate per intent template (a run, or a scored folder of agent logs)."""
        from benchwright.web.evaluation.scoring import load_summary
        from benchwright.web.scorecard.figures import task_scores

        if metric not in (None, "pass rate"):
            raise UserInputError(f"a web run has no '{metric}'", path=run_dir,
                                 hint="web runs compare their pass rate")
        counts: dict[str, tuple[float, float]] = {}
        for task in task_scores(load_summary(_tasks_dir(run_dir)).tasks):
            num, den = counts.get(str(task.intent_template_id), (0.0, 0.0))
            counts[str(task.intent_template_id)] = (num + task.total, den + len(task.scores))
        return ClusterCounts("pass rate", "templates", counts)

    def export_atif(self, run_dir: Path, out: Path, redactor: Any) -> BaseModel:
        """Each trial, told its task's intent where the run's tasks file still says it."""
        from benchwright.web.trials.runner import load_web_manifest
        from benchwright.web.trials.trial_atif import export_web_run

        manifest = load_web_manifest(run_dir)
        agent = manifest.config.agent
        return export_web_run(run_dir, out, redactor, agent.name, agent.model,
                              _intents(manifest.dataset_file))

    def interrupted(self, run_dir: Path) -> str:
        """Every journaled trial stays."""
        return "interrupted; finished trials are kept"


def _rescored_repeatedly(run_dir: Path, settings: RegradeSettings) -> Rescored:
    """`eval --repeat N`: scored N times, the noise saved, report.md written again with it."""
    from benchwright.files.atomic import write_text_atomic
    from benchwright.web.scorecard.figures import render_markdown
    from benchwright.web.trials.layout import WebRunLayout
    from benchwright.web.trials.repeat import repeat_rescore

    noise, scored = repeat_rescore(run_dir, settings)
    save_noise(run_dir, noise)
    report = scored.report.model_copy(update={"grading_noise": noise})
    write_text_atomic(WebRunLayout(run_dir).report_md, render_markdown(report))
    return Rescored(result=scored.result, summary=scored.summary, report=report, noise=noise)


def _intents(dataset: Path | None) -> dict[int, str]:
    """Each task's intent from the run's tasks file (none for the official dataset, or a file
    that is gone or unreadable: the trajectories then start at the agent's first step)."""
    from benchwright.errors import BenchwrightError
    from benchwright.web.evaluation.tasks import load_task_file

    if dataset is None or not dataset.is_file():
        return {}
    try:
        return {task_id: task.intent for task_id, task in load_task_file(dataset).tasks.items()}
    except BenchwrightError:
        return {}


def _tasks_dir(folder: Path) -> Path:
    """A baseline is a web run (its tasks folder) or a scored folder of agent logs."""
    from benchwright.runs import open_run
    from benchwright.web.trials.layout import WebRunLayout

    if (folder / "manifest.json").exists() and open_run(folder).track.name == "web":
        return WebRunLayout(folder).tasks_dir
    return folder


TRACK: Track[WebRunConfig, WebManifest, WebRunResult, WebReport] = WebTrack()
