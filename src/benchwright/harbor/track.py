"""The Harbor track as the run kernel sees it (`benchwright.protocols.Track`): a run folder of
trials of Harbor tasks, each journaled once (`harbor.runner`). `benchwright.runs.start` drives
its runs through the steps below."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from benchwright.errors import UserInputError
from benchwright.harbor.runner import HarborManifest, HarborRunConfig, HarborRunResult
from benchwright.protocols import ClusterCounts, RegradeSettings, StartedRun

if TYPE_CHECKING:
    from benchwright.harbor.report import HarborReport


class HarborTrack:
    """Harbor runs: `benchwright run harbor`."""

    name = "harbor"
    noun = "harbor run"
    command = "benchwright run harbor"

    def node_checks(self, config: HarborRunConfig) -> list[Callable[[], object]]:
        """The container engine (checked when the run executes)."""
        return []

    def create(self, run_dir: Path, config: HarborRunConfig) -> HarborManifest:
        """A new run folder, the tasks read and checked first."""
        from benchwright.harbor.runner import create_run

        return create_run(run_dir, config)

    def resumed(self, run_dir: Path) -> HarborRunConfig:
        """The saved configuration."""
        return self.read(run_dir).config

    def refresh(self, run_dir: Path) -> HarborManifest:
        """The manifest as saved."""
        return self.read(run_dir)

    def sweep(self, run_dir: Path) -> None:
        """Trial folders and state images a killed predecessor left."""
        from benchwright.harbor.runner import sweep

        sweep(run_dir)

    def execute(self, run: StartedRun[HarborRunConfig]) -> HarborRunResult:
        """Every trial not yet journaled, then result.json and report.md."""
        from benchwright.harbor.runner import execute

        return execute(run.run_dir, run.config, run.executor)

    def outcome(self, run_dir: Path, result: Any) -> str:
        """Trials completed, and where the result files are."""
        return (f"{result.n_completed}/{result.n_trials} trials completed; result.json and "
                f"report.md in {run_dir}")

    def read(self, run_dir: Path) -> HarborManifest:
        """The run's manifest."""
        from benchwright.harbor.runner import load_manifest

        return load_manifest(run_dir)

    def finish(self, run_dir: Path) -> HarborRunResult:
        """result.json and report.md from the journal."""
        from benchwright.harbor.runner import finish

        return finish(run_dir)

    def regrade(self, run_dir: Path, settings: RegradeSettings) -> BaseModel:
        """Not yet: a Harbor trial's files live in its containers, which end with it."""
        raise UserInputError("a harbor run cannot be graded again yet", path=run_dir,
                             hint="docs/harbor.md lists what is not supported yet")

    def report(self, run_dir: Path, baseline: Path | None) -> HarborReport:
        """The mean reward with its interval (tasks resampled); with a baseline, the paired
        difference over the tasks both ran and its verdict."""
        from benchwright.harbor.report import build_report

        return build_report(run_dir, baseline)

    def render(self, report: HarborReport) -> str:
        """report.md's text (and the comparison, when there is one)."""
        from benchwright.harbor.report import render_report

        return render_report(report)

    def clusters(self, run_dir: Path, metric: str | None) -> ClusterCounts:
        """The mean reward per task (`plan`, `report --fail-if-worse`)."""
        from benchwright.harbor.figures import METRIC, UNIT, reward_counts
        from benchwright.harbor.runner import journaled

        if metric not in (None, METRIC):
            raise UserInputError(f"a harbor run has no {metric!r}", path=run_dir,
                                 hint=f"harbor runs compare their {METRIC}")
        self.read(run_dir)  # not a harbor run: one line naming it
        return ClusterCounts(METRIC, UNIT, reward_counts(journaled(run_dir)))

    def export_atif(self, run_dir: Path, out: Path, redactor: Any) -> BaseModel:
        """Each step's mini session (`trials/<task>__<n>/steps/<step>/agent/trajectory.json`,
        the coding track's format) as ATIF under `out` at the same relative place."""
        from benchwright.coding.agents.atif import export_run

        self.read(run_dir)  # not a harbor run: one line naming it
        return export_run(run_dir, out, redactor)

    def resume_command(self, run_dir: Path) -> str:
        """How to continue the run."""
        return f"benchwright run harbor --resume {run_dir}"

    def interrupted(self, run_dir: Path) -> str:
        """Every journaled trial stays."""
        return "interrupted; finished trials are kept"


TRACK = HarborTrack()
