"""What a judging did (`metrics judge --json`), and the judge's part of a run's report: checkpoints
judged, errors, cost, and the samples' agreement per rubric item."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import BaseModel, Field

from benchwright.coding.attempts import journal
from benchwright.coding.attempts.judging.files import read_judge_file
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import RunConfig
from benchwright.judge.agreement import agreement_table
from benchwright.judge.models import CriterionAgreement, JudgeFile

if TYPE_CHECKING:
    from benchwright.coding.attempts.judging.tasks import Attempt
    from benchwright.judge.budget import Budget
    from benchwright.judge.models import JudgeSettings
    from benchwright.judge.snapshot import JudgeContext

RowStatus = Literal["judged", "error", "unjudged", "skipped"]


class JudgedCheckpoint(BaseModel):
    """One checkpoint in a judging."""

    problem: str
    """The problem."""
    trial: int
    """The trial."""
    checkpoint: str
    """The checkpoint."""
    status: RowStatus
    """judged; error (listed, not scored); unjudged (left for a later call: --max-cost, or a
    fatal provider error); skipped (judged before with these settings)."""
    flags: int | None = None
    """Flags in rubric.jsonl (carried ones included)."""
    carried_over: int = 0
    """Of them, carried from the previous checkpoint."""
    requests: int = 0
    """Requests behind the verdict."""
    requests_made: int = 0
    """Calls sent to the provider now (an invalid reply's second ask included)."""
    requests_cached: int = 0
    """Requests answered from the cache."""
    cost_usd: float = 0.0
    """Cost of the requests behind the verdict."""
    paid_now: float = 0.0
    """Of that, spent by this judging."""
    cost_unknown: bool = False
    """Some requests' cost is unknown (no price and none from the provider): the cost above is
    the known part, shown as "+ unknown"."""
    errors: list[str] = Field(default_factory=list)
    """Why it failed."""


class JudgeRunSummary(BaseModel):
    """`benchwright metrics judge --json`."""

    format: Literal["benchwright.judge-run/1"] = "benchwright.judge-run/1"
    """The output's format and version."""
    run_dir: Path
    """The run judged."""
    model: str
    """The judge model."""
    protocol: str
    """The API spoken."""
    endpoint: str | None
    """The base URL (credentials redacted)."""
    rubric: str
    """The rubric's source."""
    samples: int
    """Samples per request."""
    checkpoints: list[JudgedCheckpoint]
    """Every checkpoint considered, in run order."""
    n_judged: int
    """Judged now."""
    n_skipped: int
    """Judged before with these settings."""
    n_errors: int
    """Failed (listed in `errors`; judging again retries them)."""
    n_unjudged: int
    """Left for a later call."""
    requests_made: int
    """Calls sent to the provider now (an invalid reply's second ask included)."""
    requests_cached: int
    """Requests answered from the cache."""
    cost_usd_paid: float
    """Spent by this judging (the known part when `cost_unknown`)."""
    cost_unknown: bool = False
    """Some requests made now have an unknown cost."""
    stopped: str | None = None
    """Why requests stopped early (--max-cost, a fatal provider error)."""
    errors: list[str] = Field(default_factory=list)
    """`problem/trial_N/checkpoint: error` for every failed checkpoint."""
    agreement: list[CriterionAgreement] = Field(default_factory=list)
    """Per rubric item, the samples' agreement over every checkpoint judged (two samples or
    more)."""


class Judged(Protocol):
    """What a summary reads of a judging (`judging.JudgeSession`, which imports this module)."""

    @property
    def settings(self) -> JudgeSettings: ...
    @property
    def ctx(self) -> JudgeContext: ...
    @property
    def budget(self) -> Budget: ...


def summarise(run_dir: Path, session: Judged, rows: list[JudgedCheckpoint],
              attempts: list[Attempt]) -> JudgeRunSummary:
    """The summary of a judging."""
    s, ctx = session.settings, session.ctx
    judged = [f for a in attempts for t in a.tasks
              if (f := read_judge_file(t.folder)) is not None and f.status == "judged"]
    return JudgeRunSummary(
        run_dir=run_dir, model=s.model, protocol=s.protocol, endpoint=ctx.endpoint,
        rubric=ctx.rubric.source, samples=s.samples, checkpoints=rows,
        n_judged=_count(rows, "judged"), n_skipped=_count(rows, "skipped"),
        n_errors=_count(rows, "error"), n_unjudged=_count(rows, "unjudged"),
        requests_made=sum(r.requests_made for r in rows),
        requests_cached=sum(r.requests_cached for r in rows),
        cost_usd_paid=round(sum(r.paid_now for r in rows), 8),
        cost_unknown=any(r.cost_unknown and r.requests_made for r in rows),
        stopped=session.budget.stop_reason,
        errors=[f"{r.problem}/trial_{r.trial}/{r.checkpoint}: {'; '.join(r.errors)}"
                for r in rows if r.status == "error"],
        agreement=agreement_table([f.agreement for f in judged if f.agreement]))


def _count(rows: list[JudgedCheckpoint], status: RowStatus) -> int:
    return sum(r.status == status for r in rows)


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
