"""Every SCBench-shaped file of a coding run folder, derived from our records whenever the run is
finished (at its end, on `--resume`, on `eval RUN_DIR`): `config.yaml`,
`checkpoint_results.jsonl`, each checkpoint's `quality_analysis/{overall_quality.json,
files.jsonl, symbols.jsonl, ast_grep.jsonl}`, and SCBench's run statistics, which the caller
writes into result.json beside ours."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import ChainSummary, CheckpointRecord, Manifest
from benchwright.coding.attempts.scbench.quality_files import write_quality_files
from benchwright.coding.attempts.scbench.rows import CheckpointInputs, Row, checkpoint_row
from benchwright.coding.attempts.scbench.rubric import rubric_figures
from benchwright.coding.attempts.scbench.run_config import identity, run_config
from benchwright.coding.attempts.scbench.summary import scbench_summary
from benchwright.coding.grading.artifacts import load_grading
from benchwright.coding.grading.evaluation import CheckpointEvaluation
from benchwright.coding.problems.loader import load_problem
from benchwright.errors import BenchwrightError
from benchwright.files.atomic import write_text_atomic
from benchwright.files.redaction import Redactor
from benchwright.files.untrusted import read_json_object
from benchwright.metrics.models import SnapshotMetrics
from benchwright.runs.journal import JOURNAL_HINT

HEADER = ("# SCBench's run configuration, derived from manifest.json by benchwright "
          "(rewritten by `benchwright eval RUN_DIR`); manifest.json is the source of truth.\n")


def export_scbench(run_dir: Path, manifest: Manifest, summaries: list[ChainSummary],
                   redactor: Redactor) -> dict[str, Any]:
    """Write the SCBench files of the run; return SCBench's run statistics (for result.json)."""
    rows: list[Row] = []
    for summary in summaries:
        rows += attempt_rows(run_dir, manifest, summary)
    layout = RunLayout(run_dir)
    text = yaml.safe_dump(run_config(manifest, run_dir), sort_keys=False, allow_unicode=True)
    write_text_atomic(layout.config_yaml, redactor.text(HEADER + text))
    # Python's JSON, as SCBench writes it: a percent change from zero is `Infinity`
    write_text_atomic(layout.results_jsonl,
                      redactor.text("".join(json.dumps(row) + "\n" for row in rows)))
    return scbench_summary(identity(manifest), rows).model_dump(mode="json")


def _orders(manifest: Manifest, problem: str) -> dict[str, int]:
    """Each checkpoint's `order` (its position when the problem can no longer be read)."""
    try:
        loaded = load_problem(manifest.config.problems_dir / problem)
        return {c.name: c.order for c in loaded.checkpoints.values()}
    except BenchwrightError:
        names = manifest.problem_checkpoints.get(problem, [])
        return {name: i for i, name in enumerate(names, 1)}


def attempt_rows(run_dir: Path, manifest: Manifest, summary: ChainSummary) -> list[Row]:
    """The rows of one attempt's finished checkpoints; writes their quality files too."""
    layout = RunLayout(run_dir)
    orders = _orders(manifest, summary.problem)
    last = manifest.problem_checkpoints.get(summary.problem, [None])[-1]
    rows: list[Row] = []
    previous: tuple[Row, SnapshotMetrics | None] | None = None
    for record in summary.records:
        folder = layout.checkpoint_dir(record.problem, record.trial, record.checkpoint)
        inputs = _inputs(record, folder, run_dir, orders, last)
        if inputs.metrics is not None:
            write_quality_files(folder / "quality_analysis", inputs.metrics)
        row = checkpoint_row(inputs, previous)
        rows.append(row)
        previous = (row, inputs.metrics)
    return rows


def _inputs(record: CheckpointRecord, folder: Path, run_dir: Path, orders: dict[str, int],
            last: str | None) -> CheckpointInputs:
    return CheckpointInputs(
        record=record, path=folder.parent.relative_to(run_dir).as_posix(),
        idx=orders.get(record.checkpoint, record.index), is_last=record.checkpoint == last,
        grading=_grading(folder), metrics=_metrics(folder), diff=_diff(folder),
        rubric=rubric_figures(record, folder))


def _grading(folder: Path) -> CheckpointEvaluation | None:
    try:
        return load_grading(folder)
    except (OSError, ValidationError):
        return None


def _metrics(folder: Path) -> SnapshotMetrics | None:
    path = folder / "quality_analysis" / "metrics.json"
    try:
        return SnapshotMetrics.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return None


def _diff(folder: Path) -> dict[str, Any] | None:
    return read_json_object(folder / "diff.json", what="diff.json", hint=JOURNAL_HINT)
