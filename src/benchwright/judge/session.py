"""One judging (rubric, templates, client, cache, budget, redactor) and the judge's one entry
point for a snapshot, `JudgeSession.judge`: the track hands over what to judge (`Unit`: the
snapshot's planned requests) and what the previous checkpoint left (`Carry`), and takes back
the flags and judge.json's model (`Judged`); where those files go is the track's business.

    track: plan the unit -> pool.submit(plan) -> judge(unit, outcomes, carry) -> write, journal
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from benchwright.files.redaction import Redactor
from benchwright.judge.budget import Budget
from benchwright.judge.cache import VerdictCache
from benchwright.judge.carry import LineMap, carry_forward
from benchwright.judge.flags import RubricFlag, count_flags
from benchwright.judge.models import (
    JudgeFile,
    JudgeSettings,
    RubricRef,
    TemplateRef,
    settings_sha256,
)
from benchwright.judge.pool import RequestPool
from benchwright.judge.prompt import check_templates, load_templates
from benchwright.judge.providers import api_key, make_client
from benchwright.judge.requests import Outcome, Requester
from benchwright.judge.rubric import load_rubric
from benchwright.judge.snapshot import SnapshotPlan, SnapshotVerdict, combine, judge_context
from benchwright.version import __version__

Blocked = Literal["unjudged", "error"]


@dataclass(frozen=True)
class Unit:
    """One snapshot to judge, as the track hands it over."""

    problem: str
    """Its problem."""
    trial: int
    """Its attempt."""
    checkpoint: str
    """Its checkpoint."""
    plan: SnapshotPlan | None
    """Its requests (None: it cannot be judged, see `error`)."""
    error: str | None = None
    """Why it cannot be judged (a snapshot past the judge's limits, no spec)."""
    loc: float | None = None
    """The snapshot's lines of code, when measured (flags per 100 lines)."""


@dataclass(frozen=True)
class Carry:
    """What the previous checkpoint of a chained attempt hands on (nothing: the first one, or a
    checkpoint that started from a reference solution)."""

    checkpoint: str | None = None
    """The previous checkpoint's name (None: nothing to carry)."""
    flags: list[RubricFlag] = field(default_factory=list)
    """Its final flags."""
    line_maps: Callable[[], Mapping[str, LineMap | None]] = dict
    """How each file's lines moved since then, read when flags are carried."""
    blocked: Blocked | None = None
    """It was left unjudged, or failed: this one cannot be finished either."""


@dataclass(frozen=True)
class Judged:
    """What the judge gives back for a unit."""

    verdict: SnapshotVerdict
    """The requests' outcomes combined (counts, cost, raw replies)."""
    flags: list[RubricFlag] | None
    """The final flags, carried ones included (None: unjudged or an error)."""
    errors: list[str]
    """Why it has no flags."""
    file: JudgeFile | None
    """judge.json's model (None: left unjudged, nothing to write)."""


class JudgeSession:
    """One judging: rubric, templates, client, cache, budget and redactor."""

    def __init__(self, settings: JudgeSettings, cache_dir: Path, max_cost: float | None = None,
                 environ: Mapping[str, str] = os.environ, proxy_url: str | None = None) -> None:
        self.settings = settings
        rubric = load_rubric(settings.rubric)
        templates = load_templates(settings.prefix_template, settings.criteria_template)
        check_templates(templates, list(rubric.items))
        self.redactor = Redactor.from_environ(environ, urls={"JUDGE_BASE_URL": settings.base_url})
        self.redactor = self.redactor.with_secrets({settings.key_env: api_key(settings, environ)})
        endpoint = self.redactor.text(settings.base_url) if settings.base_url else None
        self.ctx = judge_context(settings, rubric, templates, endpoint)
        self.settings_sha = settings_sha256(settings, endpoint, rubric.sha256,
                                            (templates.prefix.sha256, templates.criteria.sha256))
        self.budget = Budget(max_cost)
        # `proxy_url`: the recording proxy's, called instead of the settings' own endpoint
        client_settings = settings.model_copy(update={"base_url": proxy_url or settings.base_url})
        self.requester = Requester(make_client(client_settings, environ),
                                   VerdictCache(cache_dir), self.budget, settings.model,
                                   settings.retries, settings.retry_backoff_s, self.redactor)

    def pool(self) -> RequestPool:
        """The threads sending requests (`--concurrency`)."""
        return RequestPool(self.requester, self.settings.concurrency)

    def settings_json(self) -> dict[str, Any]:
        """The settings of this judging as saved beside a run's judgements (no key in them)."""
        return {**self.settings.model_dump(mode="json"), "settings_sha256": self.settings_sha}

    def judge(self, unit: Unit, outcomes: list[Outcome], carry: Carry,
              started: float) -> Judged:
        """Combine the unit's outcomes, carry the previous flags forward, count them."""
        verdict = (combine(self.ctx, unit.plan, outcomes) if unit.plan is not None
                   else SnapshotVerdict(status="error", errors=[unit.error or "not planned"]))
        if verdict.status == "unjudged" or carry.blocked == "unjudged":
            return Judged(verdict, None, [], None)
        errors = verdict.errors or _blocked_error(carry)
        flags = None if errors else _final_flags(unit, verdict, carry)
        started = min([o.started for o in outcomes if o.started] + [started])
        return Judged(verdict, flags, errors, self._judge_file(unit, verdict, flags, errors,
                                                               started))

    def _judge_file(self, unit: Unit, verdict: SnapshotVerdict,
                    flags: list[RubricFlag] | None, errors: list[str],
                    started: float) -> JudgeFile:
        ctx, s, plan = self.ctx, self.settings, unit.plan
        return JudgeFile(
            problem=unit.problem, trial=unit.trial, checkpoint=unit.checkpoint,
            status="error" if flags is None else "judged", model=s.model, protocol=s.protocol,
            endpoint=ctx.endpoint,
            rubric=RubricRef(source=ctx.rubric.source, sha256=ctx.rubric.sha256,
                             items=len(ctx.rubric.items)),
            prefix_template=TemplateRef(source=ctx.templates.prefix.source,
                                        sha256=ctx.templates.prefix.sha256),
            criteria_template=TemplateRef(source=ctx.templates.criteria.source,
                                          sha256=ctx.templates.criteria.sha256),
            samples=s.samples, temperature=s.effective_temperature,
            settings_sha256=self.settings_sha,
            snapshot_sha256=plan.snapshot_sha256 if plan else "",
            files=[f.path for f in plan.files] if plan else [],
            batches=[[f.path for f in b] for b in plan.batches] if plan else [],
            requests=verdict.requests, requests_made=verdict.made,
            requests_cached=verdict.cached, invalid_retries=verdict.invalid_retries,
            usage=verdict.usage,
            cost_usd=verdict.cost_usd, cost_usd_paid_now=verdict.paid_now,
            cost_source=verdict.cost_source, dropped=verdict.dropped,
            flags_per_sample=verdict.flags_per_sample,
            metrics=None if flags is None else count_flags(flags, unit.loc),
            agreement=verdict.agreement, errors=errors,
            duration_s=round(time.monotonic() - started, 3),
            benchwright_version=__version__, judged_at=_now())


def _final_flags(unit: Unit, verdict: SnapshotVerdict, carry: Carry) -> list[RubricFlag]:
    if carry.checkpoint is None or unit.plan is None:
        return verdict.flags
    carried = carry_forward(carry.flags, verdict.flags, dict(carry.line_maps()),
                            carry.checkpoint)
    return verdict.flags + carried


def _blocked_error(carry: Carry) -> list[str]:
    if carry.blocked != "error" or carry.checkpoint is None:
        return []
    return [f"{carry.checkpoint} could not be judged, so its flags cannot be carried into this "
            "checkpoint; judging again finishes both (answers are cached)"]


def _now() -> str:
    """As the run files stamp time (runs.clock.utc_now, a layer up)."""
    return datetime.now(UTC).isoformat(timespec="seconds")
