"""The LLM judge's files in a coding run: per checkpoint `rubric.jsonl` and `raw_rubric.json`
(SCBench's) and `judge.json` (ours); per attempt the judge journal; and the rubric metrics put
into each checkpoint's quality (its journal record and quality_analysis/quality.json).

A checkpoint is judged when its latest judge-journal record says so for the files its snapshot
holds now (their hash) and its judge.json agrees; the record is appended only after the three
files are written, so a kill -9 leaves a checkpoint either judged or to be judged again (its
requests then come from the cache).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from benchwright.coding.attempts import journal
from benchwright.coding.attempts.layout import JUDGE_JSON, RAW_RUBRIC, RUBRIC_JSONL, RunLayout
from benchwright.coding.attempts.models import CheckpointRecord, RunConfig, StartFrom
from benchwright.coding.attempts.record_rules import JudgeRules
from benchwright.files.atomic import write_text_atomic
from benchwright.files.redaction import Redactor
from benchwright.files.untrusted import read_json_object, read_untrusted_bytes
from benchwright.judge.flags import RubricFlag
from benchwright.judge.models import JudgeFile, JudgeStatus
from benchwright.metrics.erosion import QualitySummary, summarise, with_rubric
from benchwright.metrics.models import SnapshotMetrics
from benchwright.runs.journal import JOURNAL_HINT, append_record, read_jsonl

MAX_RESULT_BYTES = 256 * 2**20
START_METRICS = "start_metrics.json"  # a reference start's metrics (the run loop's)


class JudgeRecord(BaseModel):
    """One line of an attempt's judge journal: a checkpoint judged (or failed), files written."""

    format: Literal["benchwright.judge-record/1"] = "benchwright.judge-record/1"
    """The record's format and version."""
    problem: str
    """The problem."""
    trial: int
    """The trial."""
    checkpoint: str
    """The checkpoint."""
    status: JudgeStatus
    """judged or error."""
    snapshot_sha256: str
    """Hash of the judged files (a checkpoint run again has new ones)."""
    settings_sha256: str
    """Hash of the judge's settings."""
    model: str
    """The judge model."""
    flags: int = 0
    """Flags in rubric.jsonl."""
    carried_over: int = 0
    """Of them, carried from the previous checkpoint."""
    cost_usd: float = 0.0
    """Cost of the requests behind the verdict."""
    errors: list[str] = []
    """Why it failed (status error)."""
    finished_at: str
    """When (UTC, ISO 8601)."""


def latest_records(layout: RunLayout, problem: str, trial: int) -> dict[str, JudgeRecord]:
    """Each checkpoint's latest judge record."""
    return {r.checkpoint: r for r in read_jsonl(layout.judge_journal(problem, trial),
                                                JudgeRecord, JudgeRules(problem, trial))}


def append_judge_record(layout: RunLayout, record: JudgeRecord) -> None:
    """Journal a checkpoint whose files are written."""
    append_record(layout.judge_journal(record.problem, record.trial), record)


def write_outputs(folder: Path, result: JudgeFile, flags: list[RubricFlag] | None,
                  raw: dict[str, list[dict[str, Any]]], redactor: Redactor) -> None:
    """raw_rubric.json, rubric.jsonl (none for an error: nothing is scored) and judge.json,
    secrets redacted. Atomic, not fsynced: a checkpoint counts as judged only when they read
    back (see the module), so one lost with the machine's power is judged again, from the
    cache."""
    write_text_atomic(folder / RAW_RUBRIC, redactor.text(json.dumps(raw, indent=2)) + "\n",
                      durable=False)
    if flags is None:
        (folder / RUBRIC_JSONL).unlink(missing_ok=True)
    else:
        write_text_atomic(folder / RUBRIC_JSONL,
                          redactor.text("".join(f.line() + "\n" for f in flags)), durable=False)
    write_text_atomic(folder / JUDGE_JSON, redactor.text(result.model_dump_json(indent=2)) + "\n",
                      durable=False)


def read_judge_file(folder: Path) -> JudgeFile | None:
    """A checkpoint's judge.json, None when absent or unreadable."""
    data = _read(folder / JUDGE_JSON, "judge.json")
    try:
        return None if data is None else JudgeFile.model_validate_json(data)
    except ValidationError:
        return None


def read_flags(folder: Path) -> list[RubricFlag] | None:
    """A checkpoint's rubric.jsonl, None when absent or not ours to read."""
    data = _read(folder / RUBRIC_JSONL, "rubric.jsonl")
    if data is None:
        return None
    try:
        return [RubricFlag.model_validate_json(line) for line in data.splitlines() if line.strip()]
    except ValidationError:
        return None


def _read(path: Path, what: str) -> bytes | None:
    if not path.is_file() or path.is_symlink():
        return None
    return read_untrusted_bytes(path, what=what, max_bytes=MAX_RESULT_BYTES, hint=JOURNAL_HINT)


def sync_quality(run_dir: Path, config: RunConfig, problems: list[str] | None = None) -> None:
    """Every journaled checkpoint's quality recomputed from its saved metrics, with its rubric
    metrics when judged; journals and quality.json rewritten where they changed."""
    layout = RunLayout(run_dir)
    chained = config.start_from is StartFrom.CHAIN
    for problem in problems or config.problems:
        for trial in range(1, config.trials + 1):
            records = journal.read_records(layout.journal(problem, trial))
            updated = _with_judgements(layout, problem, trial, records, chained)
            if updated != records:
                journal.rewrite(layout.journal(problem, trial), updated)


def _with_judgements(layout: RunLayout, problem: str, trial: int,
                     records: list[CheckpointRecord], chained: bool) -> list[CheckpointRecord]:
    updated: list[CheckpointRecord] = []
    for record in records:
        folder = layout.checkpoint_dir(problem, trial, record.checkpoint)
        previous = updated[-1] if updated and chained else None
        quality = checkpoint_quality(folder, record, previous)
        if quality != record.quality:
            save_quality(folder, quality)
            record = record.model_copy(update={"quality": quality})
        updated.append(record)
    return updated


def save_quality(folder: Path, quality: QualitySummary | None) -> None:
    """quality_analysis/quality.json, where the run measured metrics."""
    if quality is not None and (folder / "quality_analysis").is_dir():
        write_text_atomic(folder / "quality_analysis" / "quality.json",
                          json.dumps(quality.model_dump(mode="json"), indent=2) + "\n")


def judge_errors(folder_of: Callable[[str], Path],
                 records: list[CheckpointRecord]) -> tuple[int, list[str]]:
    """Of an attempt's checkpoints: how many are judged, and why the failed ones failed."""
    judged, errors = 0, []
    for record in records:
        found = read_judge_file(folder_of(record.checkpoint))
        if found is not None and found.status == "judged":
            judged += 1
        elif found is not None:
            errors.append(f"{found.problem}/trial_{found.trial}/{found.checkpoint}: "
                          f"{'; '.join(found.errors)}")
    return judged, errors


def checkpoint_quality(folder: Path, record: CheckpointRecord,
                       previous: CheckpointRecord | None) -> QualitySummary | None:
    """The checkpoint's quality: static metrics as measured, plus the judge's if judged;
    `previous` is the checkpoint it continued (None at the first, or from a reference start)."""
    base = _static_quality(folder, record, previous)
    judged = read_judge_file(folder)
    if judged is None or judged.status != "judged" or judged.metrics is None:
        return base
    before = previous.quality if previous is not None else None
    return with_rubric(base or QualitySummary(values={}), judged.metrics, before)


def _static_quality(folder: Path, record: CheckpointRecord,
                    previous: CheckpointRecord | None) -> QualitySummary | None:
    """The quality the run measured (recomputed from metrics.json, against what the checkpoint
    started from, as the run loop measured it: the judge's part left out); the record's own when
    the metrics cannot be read again."""
    if record.quality is None:
        return None
    metrics = _metrics(folder)
    if metrics is None:
        return record.quality
    return summarise(metrics, _start_metrics(folder, previous), read_diff(folder))


def _start_metrics(folder: Path, previous: CheckpointRecord | None) -> SnapshotMetrics | None:
    """A reference start's saved metrics, else the previous checkpoint's."""
    start = folder / "quality_analysis" / START_METRICS
    if start.is_file():
        return _metrics(folder, start.name)
    return _metrics(folder.parent / previous.checkpoint) if previous is not None else None


def _metrics(folder: Path, name: str = "metrics.json") -> SnapshotMetrics | None:
    data = _read(folder / "quality_analysis" / name, name)
    try:
        return None if data is None else SnapshotMetrics.model_validate_json(data)
    except ValidationError:
        return None


def read_diff(folder: Path) -> dict[str, Any]:
    """A checkpoint's diff.json (empty when unreadable)."""
    return read_json_object(folder / "diff.json", what="diff.json", max_bytes=MAX_RESULT_BYTES,
                            hint=JOURNAL_HINT) or {}
