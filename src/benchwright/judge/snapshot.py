"""One snapshot's judgement: its requests (batch x category x sample), then their outcomes
combined into flags, agreement, usage, cost and errors.

Within a batch the first category's first sample goes alone: once it is answered the provider
holds the shared prefix in its prompt cache, and the batch's other requests follow (SCBench's
order).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from benchwright.judge.agreement import consensus, group_flags, support_counts
from benchwright.judge.batching import SourceFile, batch_files, files_sha256
from benchwright.judge.cache import request_key
from benchwright.judge.flags import RubricFlag, annotated
from benchwright.judge.models import (
    CostSource,
    Dropped,
    JudgeSettings,
    SupportCounts,
    TokenUsage,
    least_certain,
)
from benchwright.judge.prompt import Templates, render_criteria, render_prefix
from benchwright.judge.providers import SYSTEM
from benchwright.judge.requests import Outcome, Request
from benchwright.judge.rubric import Rubric
from benchwright.judge.verdicts import Flag, reply_schema

VerdictStatus = Literal["judged", "error", "unjudged"]


@dataclass(frozen=True)
class JudgeContext:
    """What every snapshot of one judging shares."""

    settings: JudgeSettings
    rubric: Rubric
    templates: Templates
    endpoint: str | None
    """The base URL without credentials (part of every cache key)."""
    criteria: dict[str, str]
    """Each category's rendered criteria part."""


def judge_context(settings: JudgeSettings, rubric: Rubric, templates: Templates,
                  endpoint: str | None) -> JudgeContext:
    """The shared parts, the criteria rendered once."""
    criteria = {c: render_criteria(templates, items) for c, items in rubric.categories().items()}
    return JudgeContext(settings=settings, rubric=rubric, templates=templates,
                        endpoint=endpoint, criteria=criteria)


@dataclass
class SnapshotPlan:
    """The requests about one snapshot, grouped by batch (each group's first goes alone)."""

    files: list[SourceFile]
    batches: list[list[SourceFile]]
    groups: list[list[Request]]
    snapshot_sha256: str

    @property
    def requests(self) -> list[Request]:
        return [r for group in self.groups for r in group]


def plan_snapshot(ctx: JudgeContext, spec: str, files: list[SourceFile]) -> SnapshotPlan:
    """Every request needed to judge these files."""
    s = ctx.settings
    batches = batch_files(files, s.max_batch_lines, s.max_batch_files)
    groups = [_batch_requests(ctx, spec, batch) for batch in batches]
    return SnapshotPlan(files=files, batches=batches, groups=groups,
                        snapshot_sha256=files_sha256(files))


def _batch_requests(ctx: JudgeContext, spec: str, batch: list[SourceFile]) -> list[Request]:
    s = ctx.settings
    prefix = render_prefix(ctx.templates, spec, batch)
    lines = {f.path: f.lines for f in batch}
    requests = []
    for category, items in ctx.rubric.categories().items():
        names = [i.name for i in items]
        schema = reply_schema(names, list(lines))
        parts = {"model": s.model, "protocol": s.protocol, "endpoint": ctx.endpoint,
                 "temperature": s.effective_temperature, "max_tokens": s.max_output_tokens,
                 "system": SYSTEM, "prefix": prefix, "criteria": ctx.criteria[category],
                 "schema": schema}
        requests += [Request(key=request_key(parts, sample), batch_key=",".join(lines),
                             category=category, sample=sample, prefix=prefix,
                             criteria=ctx.criteria[category], schema=schema,
                             criteria_names=frozenset(names), file_lines=lines)
                     for sample in range(s.samples)]
    return requests


@dataclass
class SnapshotVerdict:
    """The snapshot's outcome before carry-forward."""

    status: VerdictStatus
    """`judged`; `error` (see errors); `unjudged` (stopped by --max-cost or a fatal error)."""
    flags: list[RubricFlag] = field(default_factory=list)
    """The flags kept (every flag with one sample; the majority's with more)."""
    flags_per_sample: list[int] = field(default_factory=list)
    agreement: dict[str, SupportCounts] = field(default_factory=dict)
    raw: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Raw responses by batch (the files joined by commas), as SCBench's raw_rubric.json."""
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    paid_now: float = 0.0
    cost_source: CostSource = "none"
    requests: int = 0
    made: int = 0
    cached: int = 0
    invalid_retries: int = 0
    dropped: Dropped = field(default_factory=Dropped)
    errors: list[str] = field(default_factory=list)


def combine(ctx: JudgeContext, plan: SnapshotPlan, outcomes: list[Outcome]) -> SnapshotVerdict:
    """The verdict of a snapshot from its requests' outcomes (in the plan's order)."""
    verdict = _totals(outcomes)
    failed = [o for o in outcomes if o.status != "ok"]
    if any(o.status == "halted" for o in failed):
        verdict.status = "unjudged"
        return verdict
    if failed:
        verdict.status = "error"
        verdict.errors = sorted({f"{o.request.batch_key} [{o.request.category}]: {o.error}"
                                 for o in failed})
        return verdict
    samples = ctx.settings.samples
    per_sample: list[list[Flag]] = [[] for _ in range(samples)]
    for outcome in outcomes:
        per_sample[outcome.request.sample] += outcome.flags
    groups = group_flags(per_sample)
    verdict.flags = [annotated(f, ctx.rubric) for f in consensus(groups, samples)]
    verdict.flags_per_sample = [len(flags) for flags in per_sample]
    if samples > 1:
        names = sorted(i.name for i in ctx.rubric.items)
        verdict.agreement = support_counts(per_sample, groups, names,
                                           {f.path: f.lines for f in plan.files}, samples)
    return verdict


def _totals(outcomes: list[Outcome]) -> SnapshotVerdict:
    verdict = SnapshotVerdict(status="judged", requests=len(outcomes))
    dropped: Counter[str] = Counter()
    for o in outcomes:
        verdict.raw.setdefault(o.request.batch_key, []).extend(o.raw)
        verdict.usage = verdict.usage.plus(o.usage)
        verdict.cost_usd += o.cost_usd
        verdict.paid_now += o.paid_now
        verdict.made += o.made
        verdict.cached += o.cached
        verdict.invalid_retries += o.invalid_retries
        dropped.update(o.dropped)
    verdict.dropped = Dropped(**dropped)
    verdict.cost_source = least_certain([o.cost_source for o in outcomes])
    verdict.cost_usd, verdict.paid_now = round(verdict.cost_usd, 8), round(verdict.paid_now, 8)
    return verdict
