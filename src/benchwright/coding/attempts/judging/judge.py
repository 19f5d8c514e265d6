"""The LLM judge over a coding run (`benchwright metrics judge RUN_DIR`), and over one checkpoint
as it finishes (`run coding --judge-model`).

Every checkpoint's requests are sent at once through the pool (`--concurrency`); checkpoints are
finished in order within an attempt, because checkpoint N carries flags from N-1. A finished
checkpoint's files are written, then its judge-journal record; the run's quality records follow
from those files (`judge_files.sync_quality`). Keys stay in the environment: the files written
are swept by the redactor, the base URL's credentials included.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from benchwright.coding.attempts.judging.files import (
    JudgeRecord,
    append_judge_record,
    checkpoint_quality,
    read_judge_file,
    save_quality,
    sync_quality,
    write_outputs,
)
from benchwright.coding.attempts.judging.summary import JudgedCheckpoint, JudgeRunSummary, summarise
from benchwright.coding.attempts.judging.tasks import (
    Attempt,
    CheckpointTask,
    line_maps,
    plan_attempts,
    plan_task,
)
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import CheckpointRecord, RunConfig, StartFrom
from benchwright.coding.attempts.traffic import judge_proxy
from benchwright.errors import BenchwrightError, UserInputError
from benchwright.judge.flags import RubricFlag
from benchwright.judge.models import JudgeSettings
from benchwright.judge.prompt import check_templates, load_templates
from benchwright.judge.providers import make_client
from benchwright.judge.requests import Outcome
from benchwright.judge.rubric import load_rubric
from benchwright.judge.session import Blocked, Carry, Unit
from benchwright.judge.session import JudgeSession as Session
from benchwright.judge.snapshot import SnapshotVerdict
from benchwright.llm.models import LlmTraffic
from benchwright.runs.clock import utc_now

OnChecked = Callable[[JudgedCheckpoint], None]


@dataclass
class Previous:
    """What checkpoint N needs of N-1: its final flags, or why it has none."""

    task: CheckpointTask | None = None
    """N-1 (None at the first checkpoint)."""
    flags: list[RubricFlag] = field(default_factory=list)
    """Its flags (rubric.jsonl)."""
    blocked: Blocked | None = None
    """N-1 was left unjudged, or failed: N cannot be finished."""


class JudgeSession(Session):
    """One judging of a coding run: the judge's session, its cache in the run's judge folder."""

    def __init__(self, run_dir: Path, settings: JudgeSettings, max_cost: float | None = None,
                 environ: Mapping[str, str] = os.environ, proxy_url: str | None = None) -> None:
        self.layout = RunLayout(run_dir)
        super().__init__(settings, self.layout.judge_dir / "cache", max_cost, environ, proxy_url)

    def save_settings(self) -> None:
        """judge/settings.json: the settings of the latest judging (no key in it)."""
        self.redactor.write_json(self.layout.judge_dir / "settings.json", self.settings_json())

    def finish(self, task: CheckpointTask, outcomes: list[Outcome], previous: Previous,
               started: float) -> tuple[JudgedCheckpoint, list[RubricFlag] | None]:
        """The judge's verdict on the checkpoint; its files written and the checkpoint
        journaled."""
        judged = self.judge(_unit(task), outcomes, _carry(task, previous), started)
        if judged.file is None:
            return _row(task, "unjudged", judged.verdict, None), None
        result, flags = judged.file, judged.flags
        write_outputs(task.folder, result, flags, judged.verdict.raw, self.redactor)
        append_judge_record(self.layout, JudgeRecord(
            problem=task.problem, trial=task.trial, checkpoint=task.record.checkpoint,
            status=result.status, snapshot_sha256=result.snapshot_sha256,
            settings_sha256=self.settings_sha, model=self.settings.model,
            flags=len(flags or []), carried_over=result.metrics.carried_over
            if result.metrics else 0, cost_usd=result.cost_usd, errors=judged.errors,
            finished_at=utc_now()))
        return _row(task, result.status, judged.verdict, flags, judged.errors), flags


def _unit(task: CheckpointTask) -> Unit:
    return Unit(problem=task.problem, trial=task.trial, checkpoint=task.record.checkpoint,
                plan=task.plan, error=task.error, loc=task.loc)


def _carry(task: CheckpointTask, previous: Previous) -> Carry:
    before = previous.task
    if before is None:
        return Carry(blocked=previous.blocked)
    return Carry(checkpoint=before.record.checkpoint, flags=previous.flags,
                 line_maps=lambda: line_maps(task, before), blocked=previous.blocked)


def _row(task: CheckpointTask, status: str, verdict: SnapshotVerdict,
         flags: list[RubricFlag] | None, errors: list[str] | None = None) -> JudgedCheckpoint:
    return JudgedCheckpoint(
        problem=task.problem, trial=task.trial, checkpoint=task.record.checkpoint,
        status=status, flags=len(flags) if flags is not None else None,
        carried_over=sum(f.carried_over is not None for f in flags) if flags else 0,
        requests=verdict.requests, requests_made=verdict.made,
        requests_cached=verdict.cached, cost_usd=verdict.cost_usd,
        paid_now=verdict.paid_now, cost_unknown=verdict.cost_source == "unknown",
        errors=errors or [])


def judge_run(run_dir: Path, config: RunConfig, settings: JudgeSettings, *,
              problems: list[str] | None = None,
              max_cost: float | None = None, overwrite: bool = False,
              on_start: Callable[[int], None] = lambda _n: None,
              on_checked: OnChecked = lambda _row: None,
              environ: Mapping[str, str] = os.environ,
              traffic: LlmTraffic | None = None) -> JudgeRunSummary:
    """Judge every journaled checkpoint not judged yet (all of them with `overwrite`); then the
    run's quality records. The caller holds the run's lock and rewrites result.json. `traffic`:
    the requests recorded into, or answered from, a cassette."""
    with judge_proxy(settings, traffic, run_dir) as proxy_url:
        return _judge_run(run_dir, config, JudgeSession(run_dir, settings, max_cost, environ,
                                                        proxy_url), problems, overwrite,
                          on_start, on_checked)


def _judge_run(run_dir: Path, config: RunConfig, session: JudgeSession,
               problems: list[str] | None, overwrite: bool, on_start: Callable[[int], None],
               on_checked: OnChecked) -> JudgeRunSummary:
    chosen = _chosen(problems, config.problems)
    session.save_settings()
    attempts = plan_attempts(session.layout, config, session.ctx, session.settings_sha, chosen,
                             overwrite)
    _refuse_conflicts(attempts)
    todo = [t for a in attempts for t in a.tasks if t.state == "todo"]
    if todo:  # one line now, not minutes of retried requests (nothing to do: no endpoint needed)
        session.requester.client.require_reachable()
    on_start(len(todo))
    rows: list[JudgedCheckpoint] = []
    with session.pool() as pool:
        futures = {id(t): pool.submit(t.plan) for t in todo if t.plan is not None}
        for attempt in attempts:
            rows += _attempt(session, attempt, futures, on_checked,
                             chained=config.start_from is StartFrom.CHAIN)
    sync_quality(run_dir, config, chosen)
    return summarise(run_dir, session, rows, attempts)


def _attempt(session: JudgeSession, attempt: Attempt, futures: dict[int, list[Future[Outcome]]],
             on_checked: OnChecked, chained: bool) -> list[JudgedCheckpoint]:
    """The attempt's checkpoints finished in order; from reference starts (not `chained`) a
    checkpoint did not continue the one before, so nothing is carried."""
    rows, previous = [], Previous()
    for task in attempt.tasks:
        if task.state == "done":
            rows.append(JudgedCheckpoint(problem=task.problem, trial=task.trial,
                                         checkpoint=task.record.checkpoint, status="skipped"))
            previous = Previous(task=task, flags=task.saved_flags() or []) if chained \
                else Previous()
            continue
        started = time.monotonic()
        outcomes = [f.result() for f in futures.get(id(task), [])]
        row, flags = session.finish(task, outcomes, previous, started)
        rows.append(row)
        on_checked(row)
        blocked: Blocked | None = None if flags is not None else (
            "unjudged" if row.status == "unjudged" else "error")
        previous = Previous(task=task, flags=flags or [], blocked=blocked) if chained \
            else Previous()
    return rows


def _chosen(wanted: list[str] | None, problems: list[str]) -> list[str]:
    for name in wanted or []:
        if name not in problems:
            raise UserInputError(f"the run has no problem {name!r}",
                                 hint=f"choose from: {', '.join(problems)}")
    return [p for p in problems if not wanted or p in wanted]


def _refuse_conflicts(attempts: list[Attempt]) -> None:
    clashing = [t for a in attempts for t in a.tasks if t.state == "conflict"]
    if clashing:
        models = sorted({t.judged_with or "?" for t in clashing})
        raise UserInputError(
            f"{len(clashing)} checkpoint(s) were judged with other settings (model "
            f"{', '.join(models)}, or another rubric, template or sample count), first: "
            f"{clashing[0].label}",
            hint="pass --overwrite to judge the whole selection again with these settings "
            "(one setting per run keeps its figures comparable)")


def check_judge(settings: JudgeSettings, environ: Mapping[str, str] = os.environ) -> None:
    """What every checkpoint's judging would run into, checked before a run starts: the rubric,
    the templates, the key, the SDK, an endpoint that takes connections."""
    rubric = load_rubric(settings.rubric)
    check_templates(load_templates(settings.prefix_template, settings.criteria_template),
                    list(rubric.items))
    make_client(settings, environ).require_reachable()


def judge_checkpoint(session: JudgeSession, problem: str, trial: int, record: CheckpointRecord,
                     previous: CheckpointRecord | None, spec: str) -> CheckpointRecord:
    """Judge one checkpoint as it finishes (`run coding --judge-model`): the record back, its
    quality with the rubric metrics once judged. A failure is the checkpoint's judge error
    (judge.json; the run's result lists it and the end of the run, or `metrics judge`, tries
    again); it never stops the attempt."""
    folder = session.layout.checkpoint_dir(problem, trial, record.checkpoint)
    task = CheckpointTask(problem=problem, trial=trial, record=record, folder=folder)
    try:
        plan_task(task, session.ctx, lambda _checkpoint, _folder: spec)
        started = time.monotonic()
        with session.pool() as pool:
            outcomes = [f.result() for f in pool.submit(task.plan)] if task.plan else []
        session.finish(task, outcomes, _previous(session.layout, problem, trial, previous),
                       started)
    except BenchwrightError:
        return record
    quality = checkpoint_quality(folder, record, previous)
    save_quality(folder, quality)
    return record.model_copy(update={"quality": quality})


def _previous(layout: RunLayout, problem: str, trial: int,
              record: CheckpointRecord | None) -> Previous:
    if record is None:
        return Previous()
    task = CheckpointTask(problem=problem, trial=trial, record=record,
                          folder=layout.checkpoint_dir(problem, trial, record.checkpoint))
    written, flags = read_judge_file(task.folder), task.saved_flags()
    if written is None or written.status != "judged" or flags is None:
        return Previous(task=task, blocked="error")
    return Previous(task=task, flags=flags)
