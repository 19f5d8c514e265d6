"""Where each file of a run directory lives."""

from __future__ import annotations

from pathlib import Path

MANIFEST = "manifest.json"
RESULTS_JSONL = "checkpoint_results.jsonl"
RESULT_JSON = "result.json"
REPORT_MD = "report.md"
JOURNAL = "journal.jsonl"
INFRA_ERROR = "infra_error.json"
ATTEMPT_ERROR = "error.json"
WORK = ".work"
GRADING = ".grading"


class RunFiles:
    """The files every run directory (coding or web) has at its root."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def manifest(self) -> Path:
        return self.root / MANIFEST

    @property
    def result_json(self) -> Path:
        return self.root / RESULT_JSON

    @property
    def report_md(self) -> Path:
        return self.root / REPORT_MD


class RunLayout(RunFiles):
    """Paths inside one coding run directory."""

    @property
    def results_jsonl(self) -> Path:
        return self.root / RESULTS_JSONL

    def chain_dir(self, problem: str, trial: int) -> Path:
        return self.root / problem / f"trial_{trial}"

    def journal(self, problem: str, trial: int) -> Path:
        return self.chain_dir(problem, trial) / JOURNAL

    def infra_error(self, problem: str, trial: int) -> Path:
        """Where an attempt stopped by an infrastructure error says so."""
        return self.chain_dir(problem, trial) / INFRA_ERROR

    def attempt_error(self, problem: str, trial: int) -> Path:
        """Where an attempt that broke off with an error says why (until `--resume`)."""
        return self.chain_dir(problem, trial) / ATTEMPT_ERROR

    def checkpoint_dir(self, problem: str, trial: int, checkpoint: str) -> Path:
        return self.chain_dir(problem, trial) / checkpoint

    def work_dir(self, problem: str, trial: int) -> Path:
        """The live workspace (rebuilt from the last snapshot on resume)."""
        return self.root / WORK / f"{problem}-trial_{trial}"

    @property
    def grading_dir(self) -> Path:
        """Grading's scratch folders (0700; hidden tests are copied there while pytest runs)."""
        return self.root / WORK / GRADING
