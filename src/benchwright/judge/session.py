"""One judging (rubric, templates, client, cache, budget, redactor) and the judge's one entry
point, `JudgeSession.judge_chains`: the track hands over what to judge (`Chain`s of `Unit`s: a
snapshot folder, its spec, how its files changed, its earlier judgement), and takes back each
unit's flags and judge.json's model (`Judged`, through `on_judged`) and the summary; where
those files go is the track's business.

    track: read the units -> judge_chains: plan, send, combine, carry forward -> on_judged: write
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from benchwright.errors import BenchwrightError, UserInputError
from benchwright.files.redaction import Redactor
from benchwright.judge.batching import judged_files
from benchwright.judge.budget import Budget
from benchwright.judge.cache import VerdictCache
from benchwright.judge.carry import Changes, carry_forward, line_maps
from benchwright.judge.flags import RubricFlag, count_flags
from benchwright.judge.models import (
    JudgeFile,
    JudgeSettings,
    RubricRef,
    SupportCounts,
    TemplateRef,
    settings_sha256,
)
from benchwright.judge.pool import RequestPool
from benchwright.judge.prompt import check_templates, load_templates
from benchwright.judge.providers import api_key, make_client
from benchwright.judge.requests import Outcome, Requester
from benchwright.judge.rubric import load_rubric
from benchwright.judge.run_summary import (
    JudgedCheckpoint,
    JudgeRunSummary,
    checkpoint_row,
    run_summary,
)
from benchwright.judge.snapshot import (
    SnapshotPlan,
    SnapshotVerdict,
    combine,
    judge_context,
    plan_snapshot,
)
from benchwright.version import __version__

__all__ = ["Before", "Blocked", "Chain", "Changes", "JudgeSession", "Judged", "OnJudged", "Saved",
           "Unit", "check_judge"]

Blocked = Literal["unjudged", "error"]
State = Literal["todo", "done", "conflict"]


@dataclass(frozen=True)
class Saved:
    """An earlier judgement of a snapshot, as the track kept it (its files read back whole)."""

    snapshot_sha256: str
    """The hash of the files judged then."""
    settings_sha256: str
    """The judge's settings then."""
    model: str
    """The judge model then."""
    flags: list[RubricFlag]
    """Its final flags."""
    agreement: dict[str, SupportCounts] = field(default_factory=dict)
    """Its samples' agreement (two samples or more)."""


@dataclass(frozen=True)
class Unit:
    """One snapshot to judge, as the track hands it over."""

    problem: str
    """Its problem."""
    trial: int
    """Its attempt."""
    checkpoint: str
    """Its checkpoint."""
    snapshot: Path
    """The folder of files judged (those with `suffix`)."""
    spec: str
    """The specification the judge is shown."""
    suffix: str
    """The entry file's suffix: the files judged are those with it (SCBench's rule)."""
    error: str | None = None
    """Why it cannot be judged (its spec could not be read): no request is made."""
    loc: float | None = None
    """The snapshot's lines of code, when measured (flags per 100 lines)."""
    changes: Changes = field(default_factory=Changes)
    """How its files changed since the previous checkpoint (for carry-forward)."""
    saved: Saved | None = None
    """Its latest judgement, if any: judged again only with other files or `overwrite`."""


@dataclass(frozen=True)
class Before:
    """The checkpoint a unit continued (flags are carried from it)."""

    checkpoint: str
    """Its name."""
    snapshot: Path
    """Its files."""
    flags: list[RubricFlag] = field(default_factory=list)
    """Its final flags."""
    blocked: Blocked | None = None
    """It was left unjudged, or failed: the unit cannot be finished either."""


@dataclass(frozen=True)
class Chain:
    """One attempt's snapshots, in order."""

    units: list[Unit]
    """Its checkpoints."""
    chained: bool = True
    """Each continued the one before (False: each started from a reference solution, so
    nothing is carried)."""
    before: Before | None = None
    """What the first unit continued, when it is not in `units`."""


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


@dataclass
class _Step:
    """A unit planned: its requests (or why it has none) and whether to judge it now."""

    unit: Unit
    plan: SnapshotPlan | None = None
    error: str | None = None
    state: State = "todo"
    judged_with: str | None = None


OnJudged = Callable[[Unit, Judged, JudgedCheckpoint], None]


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

    def judge_chains(self, run_dir: Path, chains: list[Chain], *, overwrite: bool = False,
                     probe: bool = True, on_start: Callable[[int], None] = lambda _n: None,
                     on_judged: OnJudged = lambda _u, _j, _r: None) -> JudgeRunSummary:
        """Judge every unit not judged yet with these settings (all with `overwrite`), each
        chain's in order; `on_judged` gets each one as it is finished (the track writes it
        there). `probe`: first check that the endpoint takes connections."""
        steps = [[self._plan(unit, overwrite) for unit in chain.units] for chain in chains]
        _refuse_conflicts([step for chain in steps for step in chain])
        todo = [step for chain in steps for step in chain if step.state == "todo"]
        if todo and probe:  # one line now, not minutes of retried requests
            self.requester.client.require_reachable()
        on_start(len(todo))
        rows: list[JudgedCheckpoint] = []
        agreement: list[dict[str, SupportCounts]] = []
        with self.pool() as pool:
            futures = {id(s): pool.submit(s.plan) for s in todo if s.plan is not None}
            for chain, planned in zip(chains, steps, strict=True):
                rows += self._chain(chain, planned, futures, agreement, on_judged)
        return run_summary(run_dir, self.settings, (self.ctx.endpoint, self.ctx.rubric.source),
                           rows, agreement, self.budget.stop_reason)

    def _plan(self, unit: Unit, overwrite: bool) -> _Step:
        step = _Step(unit, error=unit.error)
        if unit.error is None:
            try:
                files = judged_files(unit.snapshot, unit.suffix)
                step.plan = plan_snapshot(self.ctx, unit.spec, files)
            except BenchwrightError as exc:
                step.error = exc.one_line()
        saved = unit.saved
        if overwrite or saved is None or step.plan is None \
                or saved.snapshot_sha256 != step.plan.snapshot_sha256:
            return step  # never judged, or judged on other files (the checkpoint ran again)
        if saved.settings_sha256 == self.settings_sha:
            step.state = "done"
        else:
            step.state, step.judged_with = "conflict", saved.model
        return step

    def _chain(self, chain: Chain, steps: list[_Step],
               futures: dict[int, list[Future[Outcome]]],
               agreement: list[dict[str, SupportCounts]],
               on_judged: OnJudged) -> list[JudgedCheckpoint]:
        """The chain's units finished in order: each carries the flags of the one before."""
        rows, before = [], chain.before
        for step in steps:
            unit = step.unit
            label = (unit.problem, unit.trial, unit.checkpoint)
            if step.state == "done" and unit.saved is not None:
                rows.append(JudgedCheckpoint(problem=unit.problem, trial=unit.trial,
                                             checkpoint=unit.checkpoint, status="skipped"))
                agreement.append(unit.saved.agreement)
                before = Before(unit.checkpoint, unit.snapshot, unit.saved.flags)
            else:
                started = time.monotonic()
                judged = self._judge(step, [f.result() for f in futures.get(id(step), [])],
                                     before, started)
                status = judged.file.status if judged.file is not None else "unjudged"
                rows.append(checkpoint_row(label, status, judged.verdict, judged.flags,
                                           judged.errors))
                agreement.append(judged.file.agreement if judged.flags is not None
                                 and judged.file is not None else {})
                on_judged(unit, judged, rows[-1])
                before = Before(unit.checkpoint, unit.snapshot, judged.flags or [],
                                None if judged.flags is not None else
                                "unjudged" if status == "unjudged" else "error")
            before = before if chain.chained else None
        return rows

    def _judge(self, step: _Step, outcomes: list[Outcome], before: Before | None,
               started: float) -> Judged:
        """Combine the unit's outcomes, carry the previous flags forward, count them."""
        verdict = (combine(self.ctx, step.plan, outcomes) if step.plan is not None
                   else SnapshotVerdict(status="error", errors=[step.error or "not planned"]))
        if verdict.status == "unjudged" or (before is not None and before.blocked == "unjudged"):
            return Judged(verdict, None, [], None)
        errors = verdict.errors or _blocked_error(before)
        flags = None if errors else _final_flags(step, verdict, before)
        started = min([o.started for o in outcomes if o.started] + [started])
        return Judged(verdict, flags, errors, self._judge_file(step, verdict, flags, errors,
                                                               started))

    def _judge_file(self, step: _Step, verdict: SnapshotVerdict,
                    flags: list[RubricFlag] | None, errors: list[str],
                    started: float) -> JudgeFile:
        ctx, s, plan, unit = self.ctx, self.settings, step.plan, step.unit
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


def _final_flags(step: _Step, verdict: SnapshotVerdict, before: Before | None
                 ) -> list[RubricFlag]:
    if before is None or step.plan is None:
        return verdict.flags
    maps = line_maps(step.plan.files, before.snapshot, step.unit.changes)
    return verdict.flags + carry_forward(before.flags, verdict.flags, maps, before.checkpoint)


def _blocked_error(before: Before | None) -> list[str]:
    if before is None or before.blocked != "error":
        return []
    return [f"{before.checkpoint} could not be judged, so its flags cannot be carried into this "
            "checkpoint; judging again finishes both (answers are cached)"]


def _refuse_conflicts(steps: list[_Step]) -> None:
    clashing = [s for s in steps if s.state == "conflict"]
    if clashing:
        models = sorted({s.judged_with or "?" for s in clashing})
        first = clashing[0].unit
        raise UserInputError(
            f"{len(clashing)} checkpoint(s) were judged with other settings (model "
            f"{', '.join(models)}, or another rubric, template or sample count), first: "
            f"{first.problem}/trial_{first.trial}/{first.checkpoint}",
            hint="pass --overwrite to judge the whole selection again with these settings "
            "(one setting per run keeps its figures comparable)")


def check_judge(settings: JudgeSettings, environ: Mapping[str, str] = os.environ) -> None:
    """What every judging with these settings would run into, checked before a run starts:
    the rubric, the templates, the key, the SDK, an endpoint that takes connections."""
    rubric = load_rubric(settings.rubric)
    check_templates(load_templates(settings.prefix_template, settings.criteria_template),
                    list(rubric.items))
    make_client(settings, environ).require_reachable()


def _now() -> str:
    """As the run files stamp time (runs.clock.utc_now, a layer up)."""
    return datetime.now(UTC).isoformat(timespec="seconds")
