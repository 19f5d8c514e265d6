"""The coding track as the run kernel sees it (`benchwright.protocols.Track`): a run folder of
checkpoint journals, finished into result.json and report.md, re-graded by `eval RUN_DIR`.
The track writes its report.md here, above the run loop (`runs/`) and the report (`report/`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from benchwright.coding.report.figures import CodingReport, build_report
from benchwright.coding.report.markdown import render_markdown
from benchwright.coding.report.run_report import write_run_report
from benchwright.coding.runs.models import Manifest, RunConfig, RunResult
from benchwright.coding.runs.regrade import VerdictChange, regrade_run
from benchwright.coding.runs.runner import (
    create_run,
    execute,
    finish,
    load_manifest,
    refresh_checksums,
    saved_attempts,
)
from benchwright.protocols import ExecutorSetup, RegradeSettings, Track


class Regraded(BaseModel):
    """What `eval RUN_DIR` did to a coding run."""

    changes: list[VerdictChange]
    """Every verdict that changed."""
    result: RunResult
    """The run's result, rewritten (report.md too)."""


class CodingTrack:
    """Coding runs: `benchwright run coding`."""

    name = "coding"
    noun = "run"  # as its messages have always said
    command = "benchwright run coding"

    def create(self, run_dir: Path, config: BaseModel) -> Manifest:
        """A new run folder for a `RunConfig`."""
        if not isinstance(config, RunConfig):
            raise TypeError(f"a coding run is configured by a RunConfig, not {type(config)}")
        return create_run(config, run_dir)

    def resume(self, run_dir: Path, workers: int = 1) -> RunResult:
        """Every checkpoint not yet journaled, on a local executor; then result.json, report.md."""
        from benchwright.registry import EXECUTORS

        manifest = refresh_checksums(run_dir, load_manifest(run_dir))
        executor = EXECUTORS.get("local").from_setup(ExecutorSetup(workers=workers))
        result = execute(run_dir, manifest.config, executor)
        write_run_report(run_dir, result)
        return result

    def read(self, run_dir: Path) -> Manifest:
        """The run's manifest."""
        return load_manifest(run_dir)

    def finish(self, run_dir: Path) -> RunResult:
        """result.json and report.md from the journals as they are."""
        config = load_manifest(run_dir).config
        result = finish(run_dir, config, saved_attempts(run_dir, config))
        write_run_report(run_dir, result)
        return result

    def regrade(self, run_dir: Path, settings: RegradeSettings) -> Regraded:
        """Grade every saved snapshot again; journals, result.json and report.md rewritten."""
        tell = settings.progress or (lambda _line: None)
        changes, result = regrade_run(run_dir, on_checkpoint=lambda s: tell(f"re-grading {s}"),
                                      executor=settings.executor)
        write_run_report(run_dir, result)
        return Regraded(changes=changes, result=result)

    def report(self, run_dir: Path, baseline: Path | None) -> CodingReport:
        """Solve rates, pass rates by group, cost and time with 95% CIs."""
        return build_report(run_dir, baseline)

    def render(self, report: BaseModel) -> str:
        """report.md's text (without the errors section result.json feeds)."""
        assert isinstance(report, CodingReport)
        return render_markdown(report)

    def resume_command(self, run_dir: Path) -> str:
        """How to continue the run."""
        return f"benchwright run coding --resume {run_dir}"


TRACK: Track = CodingTrack()
