"""The page of one graded checkpoint: its record, the prompt, the change against the previous
checkpoint side by side, every test (failing ones first) with its output, the metrics with their
change, and what the agent did.

The metric table is generic: every number in the checkpoint's record (code quality, mass,
usage, and any figure a later version adds, such as an LLM judge's rubric scores) is a row,
with the previous checkpoint's value and the change. A new metric needs no viewer change.
"""

from __future__ import annotations

from typing import Any

from benchwright.coding.attempts.checkpoint_files import CheckpointFiles, TestOutput
from benchwright.coding.attempts.models import CheckpointRecord
from benchwright.coding.problems.config import Group
from benchwright.coding.report.failures import error_line
from benchwright.metrics.directions import better
from benchwright.view.diffview import side_by_side
from benchwright.view.transcript import transcript

NOT_METRICS = {("format",), ("index",), ("trial",), ("counts",), ("quality", "delta"),
               ("agent", "exit_code")}
"""Numbers of a record that are not metrics (or are shown elsewhere: counts, deltas)."""
SHORTER = {"quality.values": "quality", "quality": "quality", "quality.mass": "mass",
           "agent.usage": "agent", "agent": "agent"}
GROUP_ORDER = {str(g): i for i, g in enumerate(Group)}
"""Failing tests of a group come before a later group's: Core first, Regression last."""
FAILED_FIRST = {"error": 0, "failed": 1, "xpassed": 2, "xfailed": 3, "skipped": 4, "passed": 5}


def _numbers(value: Any, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], float]:
    """Every numeric leaf (not a bool) under `value`, by its key path."""
    if any(path[: len(skip)] == skip for skip in NOT_METRICS):
        return {}
    if isinstance(value, bool):
        return {}
    if isinstance(value, int | float):
        return {path: float(value)}
    if isinstance(value, dict):
        found: dict[tuple[str, ...], float] = {}
        for key, item in value.items():
            found |= _numbers(item, (*path, str(key)))
        return found
    return {}


def _label(path: tuple[str, ...]) -> tuple[str, str]:
    """(group, name) of a metric's key path."""
    for cut in range(len(path) - 1, 0, -1):
        prefix = ".".join(path[:cut])
        if prefix in SHORTER:
            return SHORTER[prefix], ".".join(path[cut:])
    return ("checkpoint", path[0]) if len(path) == 1 else (path[0], ".".join(path[1:]))


def metric_rows(record: CheckpointRecord,
                previous: CheckpointRecord | None) -> list[dict[str, Any]]:
    """Every metric of the record with the previous checkpoint's value and the change."""
    now = _numbers(record.model_dump(mode="json"))
    before = _numbers(previous.model_dump(mode="json")) if previous else {}
    rows = []
    for path, value in now.items():
        group, name = _label(path)
        old = before.get(path)
        rows.append({"group": group, "name": name, "value": value, "previous": old,
                     "change": value - old if old is not None else None,
                     "better": better(name)})
    return rows


def checkpoint_page(record: CheckpointRecord, previous: CheckpointRecord | None,
                    files: CheckpointFiles) -> dict[str, Any]:
    """Everything the checkpoint page shows."""
    grading = files.grading()
    return {
        "record": _record(record), "previous": previous.checkpoint if previous else None,
        "reference_start": files.reference_start() is not None,
        "prompt": files.prompt(), "changes": _changes(files, previous),
        "tests": _tests(grading.tests if grading else [], files.test_outputs()),
        "grading": _grading(grading), "pytest_output": files.pytest_output(),
        "metrics": metric_rows(record, previous), "agent_files": _agent(files),
        "symbols": _symbols(record)}


def _agent(files: CheckpointFiles) -> dict[str, Any]:
    """The agent's result and logs, its trajectory as a transcript (`view.transcript`)."""
    agent = files.agent()
    return {"result": agent.result.model_dump(mode="json") if agent.result else None,
            "transcript": transcript(agent.trajectory) if agent.trajectory else None,
            "logs": [log.model_dump(mode="json") for log in agent.logs],
            "trajectory_note": agent.trajectory_note}


def _record(record: CheckpointRecord) -> dict[str, Any]:
    return {"problem": record.problem, "trial": record.trial, "checkpoint": record.checkpoint,
            "index": record.index, "solved": record.solved, "iso_solved": record.iso_solved,
            "core_solved": record.core_solved, "passed": record.passed,
            "grade_status": str(record.grade_status),
            "groups": {str(g): [c.passed, c.total] for g, c in record.counts.items()},
            "verdicts": {str(p): v for p, v in record.verdicts.items()},
            "snapshot_files": record.snapshot_files, "snapshot_skipped": record.snapshot_skipped,
            "grade_duration_s": record.grade_duration_s, "finished_at": record.finished_at,
            "agent": record.agent}


def _changes(files: CheckpointFiles, previous: CheckpointRecord | None) -> list[dict[str, Any]]:
    out = []
    for changed in files.changed_files(previous.checkpoint if previous else None):
        rows = side_by_side(changed.old, changed.new, changed.path)
        out.append({"path": changed.path, "change": changed.change, "rows": rows,
                    "added": sum(r[0] in ("add", "chg") for r in rows),
                    "removed": sum(r[0] in ("del", "chg") for r in rows)})
    return out


def _tests(tests: list[Any], outputs: dict[str, TestOutput]) -> list[dict[str, Any]]:
    """Failing first (Core's first); `same_as` is a failure's error line, which the page groups
    by: failures with the same one are shown once, with a count. `counted` false: a test the
    problem set's grading leaves out of the counts (shown apart, neither passed nor failed)."""
    rows = [{"id": t.id, "file": t.file, "checkpoint": t.checkpoint, "group": str(t.group),
             "outcome": t.outcome, "passed": t.passed, "counted": t.counted,
             "duration_s": t.duration_s,
             "message": t.message, "output": outputs.get(f"{t.file}::{t.id}"),
             "same_as": None if t.passed else error_line(t.message) or t.outcome} for t in tests]
    return sorted(rows, key=lambda r: (r["passed"], GROUP_ORDER.get(r["group"], len(Group)),
                                       FAILED_FIRST.get(r["outcome"], 1), r["file"]))


def _grading(grading: Any) -> dict[str, Any] | None:
    if grading is None:
        return None
    return {"status": str(grading.status), "infrastructure_reason": grading.infrastructure_reason,
            "tampering_reason": grading.tampering_reason,
            "rules_fired": [rule.model_dump(mode="json") for rule in grading.rules_fired],
            "memory_exceeded": grading.memory_exceeded, "exit_code": grading.pytest_exit_code,
            "collected": grading.pytest_collected, "duration_s": grading.duration_s,
            "grader_version": grading.grader.benchwright_version,
            "runtime": grading.grader.runtime}


def _symbols(record: CheckpointRecord) -> dict[str, list[str]]:
    quality = record.quality
    if quality is None:
        return {}
    return {"added": quality.symbols_added, "removed": quality.symbols_removed,
            "modified": quality.symbols_modified}
