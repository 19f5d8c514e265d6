"""Where each file of a coding run directory lives."""

from __future__ import annotations

from pathlib import Path

from benchwright.runs.layout import MANIFEST, REPORT_MD, RESULT_JSON, WORK, RunFiles

RECORDS_JSONL = "checkpoint_records.jsonl"
RESULTS_JSONL = "checkpoint_results.jsonl"
CONFIG_YAML = "config.yaml"
JOURNAL = "journal.jsonl"
INFRA_ERROR = "infra_error.json"
ATTEMPT_ERROR = "error.json"
GRADING = ".grading"
JUDGE = "judge"
JUDGE_JOURNAL = "judge_journal.jsonl"
RUBRIC_JSONL = "rubric.jsonl"
RAW_RUBRIC = "raw_rubric.json"
JUDGE_JSON = "judge.json"

__all__ = ["MANIFEST", "REPORT_MD", "RESULT_JSON", "RunLayout"]


class RunLayout(RunFiles):
    """Paths inside one coding run directory."""

    @property
    def records_jsonl(self) -> Path:
        """Every journal record of the run, in attempt order (derived from the journals)."""
        return self.root / RECORDS_JSONL

    @property
    def results_jsonl(self) -> Path:
        """SCBench's flat checkpoint rows (derived from the records)."""
        return self.root / RESULTS_JSONL

    @property
    def config_yaml(self) -> Path:
        """SCBench's run configuration (derived from the manifest)."""
        return self.root / CONFIG_YAML

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

    def judge_journal(self, problem: str, trial: int) -> Path:
        """The attempt's judged checkpoints (`benchwright metrics judge`, `--judge-model`)."""
        return self.chain_dir(problem, trial) / JUDGE_JOURNAL

    @property
    def judge_dir(self) -> Path:
        """The LLM judge's run-level files: settings.json and the verdict cache."""
        return self.root / JUDGE

    def checkpoint_dir(self, problem: str, trial: int, checkpoint: str) -> Path:
        return self.chain_dir(problem, trial) / checkpoint

    def work_dir(self, problem: str, trial: int) -> Path:
        """The live workspace (rebuilt from the last snapshot on resume)."""
        return self.root / WORK / f"{problem}-trial_{trial}"

    @property
    def grading_dir(self) -> Path:
        """Grading's scratch folders (0700; hidden tests are copied there while pytest runs)."""
        return self.root / WORK / GRADING
