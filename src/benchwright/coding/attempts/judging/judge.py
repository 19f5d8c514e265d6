"""The LLM judge over a coding run (`benchwright metrics judge RUN_DIR`), and over one checkpoint
as it finishes (`run coding --judge-model`).

The run folder is read into the judge's chains (`tasks.py`), handed to the judge's one entry
point (`judge.session.JudgeSession.judge_chains`), and each checkpoint it finishes comes back
here to be written: its files, then its judge-journal record; the run's quality records follow
from those files (`files.sync_quality`). Keys stay in the environment: the files written are
swept by the redactor, the base URL's credentials included.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from benchwright.coding.attempts.judging.files import (
    JudgeRecord,
    append_judge_record,
    checkpoint_quality,
    save_quality,
    sync_quality,
    write_outputs,
)
from benchwright.coding.attempts.judging.tasks import before_of, read_chains, unit_of
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import CheckpointRecord, RunConfig
from benchwright.coding.attempts.traffic import judge_proxy
from benchwright.errors import BenchwrightError, UserInputError
from benchwright.files.redaction import Redactor
from benchwright.judge.models import JudgeSettings
from benchwright.judge.run_summary import JudgedCheckpoint, JudgeRunSummary
from benchwright.judge.session import Chain, Judged, JudgeSession, Unit
from benchwright.llm.models import LlmTraffic
from benchwright.runs.clock import utc_now

OnChecked = Callable[[JudgedCheckpoint], None]


def open_judge(run_dir: Path, settings: JudgeSettings, max_cost: float | None = None,
               environ: Mapping[str, str] = os.environ,
               proxy_url: str | None = None) -> JudgeSession:
    """The judge's session for a run, its cache in the run's judge folder."""
    return JudgeSession(settings, RunLayout(run_dir).judge_dir / "cache", max_cost, environ,
                        proxy_url)


@dataclass(frozen=True)
class _Writer:
    """Writes each checkpoint the judge finishes: its files, then its journal record."""

    layout: RunLayout
    redactor: Redactor
    on_checked: OnChecked = lambda _row: None

    def __call__(self, unit: Unit, judged: Judged, row: JudgedCheckpoint) -> None:
        result = judged.file
        if result is not None:
            folder = self.layout.checkpoint_dir(unit.problem, unit.trial, unit.checkpoint)
            write_outputs(folder, result, judged.flags, judged.verdict.raw, self.redactor)
            append_judge_record(self.layout, JudgeRecord(
                problem=unit.problem, trial=unit.trial, checkpoint=unit.checkpoint,
                status=result.status, snapshot_sha256=result.snapshot_sha256,
                settings_sha256=result.settings_sha256, model=result.model,
                flags=len(judged.flags or []), carried_over=result.metrics.carried_over
                if result.metrics else 0, cost_usd=result.cost_usd, errors=judged.errors,
                finished_at=utc_now()))
        self.on_checked(row)


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
    layout = RunLayout(run_dir)
    chosen = _chosen(problems, config.problems)
    chains = read_chains(layout, config, chosen)
    with judge_proxy(settings, traffic, run_dir) as proxy_url:
        session = open_judge(run_dir, settings, max_cost, environ, proxy_url)
        session.redactor.write_json(layout.judge_dir / "settings.json", session.settings_json())
        summary = session.judge_chains(run_dir, chains, overwrite=overwrite, on_start=on_start,
                                       on_judged=_Writer(layout, session.redactor, on_checked))
    sync_quality(run_dir, config, chosen)
    return summary


def _chosen(wanted: list[str] | None, problems: list[str]) -> list[str]:
    for name in wanted or []:
        if name not in problems:
            raise UserInputError(f"the run has no problem {name!r}",
                                 hint=f"choose from: {', '.join(problems)}")
    return [p for p in problems if not wanted or p in wanted]


def judge_checkpoint(run_dir: Path, session: JudgeSession, record: CheckpointRecord,
                     attempt: tuple[str, int], previous: CheckpointRecord | None,
                     spec: str) -> CheckpointRecord:
    """Judge one checkpoint of `attempt` (problem, trial) as it finishes (`run coding
    --judge-model`): the record back, its quality with the rubric metrics once judged. A failure
    is the checkpoint's judge error (judge.json; the run's result lists it and the end of the
    run, or `metrics judge`, tries again); it never stops the attempt."""
    layout, (problem, trial) = RunLayout(run_dir), attempt
    try:
        unit = unit_of(layout, problem, trial, record, lambda _checkpoint, _folder: spec)
        before = before_of(layout, problem, trial, previous) if previous is not None else None
        session.judge_chains(run_dir, [Chain([unit], before=before)], probe=False,
                             on_judged=_Writer(layout, session.redactor))
    except BenchwrightError:
        return record
    folder = layout.checkpoint_dir(problem, trial, record.checkpoint)
    quality = checkpoint_quality(folder, record, previous)
    save_quality(folder, quality)
    return record.model_copy(update={"quality": quality})
