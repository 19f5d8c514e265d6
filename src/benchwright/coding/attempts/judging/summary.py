"""The judge's part of a coding run's report, from its checkpoints' judge.json files: checkpoints
judged, errors, cost, and the samples' agreement per rubric item."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from benchwright.coding.attempts import journal
from benchwright.coding.attempts.judging.files import read_judge_file
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import RunConfig
from benchwright.judge.agreement import agreement_table
from benchwright.judge.models import CriterionAgreement, JudgeFile


class JudgeOverview(BaseModel):
    """The judge's part of a coding report."""

    models: list[str]
    """The judge model(s) behind the verdicts."""
    n_judged: int
    """Checkpoints with a verdict."""
    n_checkpoints: int
    """Checkpoints journaled."""
    cost_usd: float
    """Cost of every verdict's requests (the known part when `cost_unknown`)."""
    cost_unknown: bool = False
    """Some verdicts' cost is unknown (judge.json's cost_source `unknown`)."""
    samples: int
    """Samples per request."""
    errors: list[str] = Field(default_factory=list)
    """Checkpoints the judge could not judge, and why."""
    agreement: list[CriterionAgreement] = Field(default_factory=list)
    """Per rubric item, the samples' agreement (two samples or more)."""


def judge_overview(run_dir: Path, config: RunConfig) -> JudgeOverview | None:
    """From the checkpoints' judge.json files; None when none was judged."""
    layout = RunLayout(run_dir)
    files: list[JudgeFile] = []
    n_checkpoints = 0
    for problem in config.problems:
        for trial in range(1, config.trials + 1):
            for record in journal.read_records(layout.journal(problem, trial)):
                n_checkpoints += 1
                found = read_judge_file(layout.checkpoint_dir(problem, trial, record.checkpoint))
                files += [found] if found is not None else []
    if not files:
        return None
    judged = [f for f in files if f.status == "judged"]
    return JudgeOverview(
        models=sorted({f.model for f in files}), n_judged=len(judged),
        n_checkpoints=n_checkpoints, cost_usd=round(sum(f.cost_usd for f in files), 6),
        cost_unknown=any(f.cost_source == "unknown" for f in files),
        samples=max(f.samples for f in files),
        errors=[f"{f.problem}/trial_{f.trial}/{f.checkpoint}: {'; '.join(f.errors)}"
                for f in files if f.status == "error"],
        agreement=agreement_table([f.agreement for f in judged if f.agreement]))
