"""The web track as the run kernel sees it (`benchwright.protocols.Track`): a run folder of trial
journals, scored offline by the official evaluator into result.json and report.md."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from benchwright.protocols import RegradeSettings, Track
from benchwright.web.runs.models import WebManifest, WebRunResult
from benchwright.web.scoring import WebEvalSummary
from benchwright.web.stats_report import WebReport


class Rescored(BaseModel):
    """What `eval RUN_DIR` did to a web run."""

    result: WebRunResult
    """The run's result, rewritten (report.md too)."""
    summary: WebEvalSummary
    """Every trial's verdict."""
    report: WebReport
    """The statistics of report.md."""


class WebTrack:
    """Web runs: `benchwright run web`."""

    name = "web"
    noun = "web run"
    command = "benchwright run web"

    def create(self, run_dir: Path, config: BaseModel) -> WebManifest:
        """A new run folder for a `WebRunConfig` (its suite opened by name)."""
        from benchwright.web.runs.models import WebRunConfig
        from benchwright.web.runs.runner import create_web_run
        from benchwright.web.runs.suites import open_suite

        if not isinstance(config, WebRunConfig):
            raise TypeError(f"a web run is configured by a WebRunConfig, not {type(config)}")
        return create_web_run(config, run_dir, open_suite(config.suite, config.env_config))

    def resume(self, run_dir: Path, workers: int = 1) -> WebRunResult:
        """Every trial not yet journaled (site workers decide the parallelism), then scoring."""
        from benchwright.web.runs.runner import execute_web_run

        return execute_web_run(run_dir)

    def read(self, run_dir: Path) -> WebManifest:
        """The run's manifest."""
        from benchwright.web.runs.runner import load_web_manifest

        return load_web_manifest(run_dir)

    def finish(self, run_dir: Path) -> WebRunResult:
        """Score the trials (verdicts whose inputs did not change are reused), write result.json
        and report.md."""
        from benchwright.web.runs.runner import finish

        return finish(run_dir).result

    def regrade(self, run_dir: Path, settings: RegradeSettings) -> Rescored:
        """Score every trial again offline (against `settings.config`'s site URLs if given)."""
        from benchwright.web.runs.runner import finish

        scored = finish(run_dir, settings.progress, force=True, config=settings.config)
        return Rescored(result=scored.result, summary=scored.summary, report=scored.report)

    def report(self, run_dir: Path, baseline: Path | None) -> WebReport:
        """Pass rates per site and template, failure modes, pass@k, with 95% CIs."""
        from benchwright.web.runs.layout import WebRunLayout
        from benchwright.web.runs.report_identity import saved_grading_time, with_identity
        from benchwright.web.scoring import load_summary
        from benchwright.web.stats_report import build_report

        manifest = self.read(run_dir)  # a damaged manifest is named before scores are read
        before = load_summary(_tasks_dir(baseline)) if baseline is not None else None
        summary = load_summary(WebRunLayout(run_dir).tasks_dir)
        return with_identity(build_report(summary, before), run_dir, manifest, summary,
                             saved_grading_time(run_dir))

    def render(self, report: BaseModel) -> str:
        """report.md's text."""
        from benchwright.web.stats_report import render_markdown

        assert isinstance(report, WebReport)
        return render_markdown(report)

    def resume_command(self, run_dir: Path) -> str:
        """How to continue the run."""
        return f"benchwright run web --resume {run_dir}"


def _tasks_dir(folder: Path) -> Path:
    """A baseline is a web run (its tasks folder) or a scored folder of agent logs."""
    from benchwright.runs import open_run
    from benchwright.web.runs.layout import WebRunLayout

    if (folder / "manifest.json").exists() and open_run(folder).track.name == "web":
        return WebRunLayout(folder).tasks_dir
    return folder


TRACK: Track = WebTrack()
