"""What a judging did, checkpoint by checkpoint and in all (`metrics judge --json`): checkpoints
judged, errors, cost, and the samples' agreement per rubric item."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from benchwright.judge.agreement import agreement_table
from benchwright.judge.flags import RubricFlag
from benchwright.judge.models import CriterionAgreement, JudgeSettings, SupportCounts
from benchwright.judge.snapshot import SnapshotVerdict

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


def checkpoint_row(label: tuple[str, int, str], status: RowStatus, verdict: SnapshotVerdict,
                   flags: list[RubricFlag] | None, errors: list[str]) -> JudgedCheckpoint:
    """One checkpoint's row (`label`: problem, trial, checkpoint)."""
    problem, trial, checkpoint = label
    return JudgedCheckpoint(
        problem=problem, trial=trial, checkpoint=checkpoint,
        status=status, flags=len(flags) if flags is not None else None,
        carried_over=sum(f.carried_over is not None for f in flags) if flags else 0,
        requests=verdict.requests, requests_made=verdict.made,
        requests_cached=verdict.cached, cost_usd=verdict.cost_usd,
        paid_now=verdict.paid_now, cost_unknown=verdict.cost_source == "unknown",
        errors=errors)


def run_summary(run_dir: Path, settings: JudgeSettings, source: tuple[str | None, str],
                rows: list[JudgedCheckpoint], agreement: list[dict[str, SupportCounts]],
                stopped: str | None) -> JudgeRunSummary:
    """The summary of a judging (`source`: its endpoint and rubric; `agreement`: each judged
    checkpoint's, those judged before included)."""
    return JudgeRunSummary(
        run_dir=run_dir, model=settings.model, protocol=settings.protocol, endpoint=source[0],
        rubric=source[1], samples=settings.samples, checkpoints=rows,
        n_judged=_count(rows, "judged"), n_skipped=_count(rows, "skipped"),
        n_errors=_count(rows, "error"), n_unjudged=_count(rows, "unjudged"),
        requests_made=sum(r.requests_made for r in rows),
        requests_cached=sum(r.requests_cached for r in rows),
        cost_usd_paid=round(sum(r.paid_now for r in rows), 8),
        cost_unknown=any(r.cost_unknown and r.requests_made for r in rows), stopped=stopped,
        errors=[f"{r.problem}/trial_{r.trial}/{r.checkpoint}: {'; '.join(r.errors)}"
                for r in rows if r.status == "error"],
        agreement=agreement_table([a for a in agreement if a]))


def _count(rows: list[JudgedCheckpoint], status: RowStatus) -> int:
    return sum(r.status == status for r in rows)
