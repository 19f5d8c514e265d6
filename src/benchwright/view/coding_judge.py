"""The LLM judge's results on the viewer's coding pages: for one checkpoint, its verdict
(`judge.json`: model, cost, tokens, requests, dropped flags, errors), its flags
(`rubric.jsonl`) and their count per rubric item; for a run, the flags per rubric item over
every judged checkpoint. Read with the coding track's readers (`coding.runs.judge_files`);
a run nobody judged has no judge.json, and its pages show nothing of the judge.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchwright.coding.attempts.judging.files import read_flags, read_judge_file
from benchwright.errors import BenchwrightError
from benchwright.judge.flags import RubricFlag
from benchwright.judge.models import JudgeFile

MAX_FLAGS = 2000
"""Flags listed on a checkpoint page (every flag is counted)."""


def _read(folder: Path) -> tuple[JudgeFile | None, list[RubricFlag]]:
    """judge.json and rubric.jsonl of a checkpoint folder; (None, []) when not judged or not
    readable (a file past its bound reads as absent, never as an error of the page)."""
    try:
        return read_judge_file(folder), read_flags(folder) or []
    except BenchwrightError:
        return None, []


def checkpoint_judge(folder: Path) -> dict[str, Any] | None:
    """What the judge said of one checkpoint; None when it was never judged."""
    verdict, flags = _read(folder)
    if verdict is None:
        return None
    return {"verdict": verdict.model_dump(mode="json", exclude={"agreement", "batches"}),
            "criteria": criteria_rows(flags, 1),
            "flags": [f.model_dump(mode="json") for f in flags[:MAX_FLAGS]],
            "n_flags": len(flags)}


def run_criteria(folders: Iterable[Path]) -> dict[str, Any]:
    """Flags per rubric item over the judged checkpoints among `folders`."""
    flags: list[RubricFlag] = []
    judged = 0
    for folder in folders:
        verdict, found = _read(folder)
        if verdict is not None and verdict.status == "judged":
            judged += 1
            flags += found
    return {"n_judged": judged, "criteria": criteria_rows(flags, judged)}


def criteria_rows(flags: list[RubricFlag], judged: int) -> list[dict[str, Any]]:
    """One row per rubric item flagged: its category and type, flags (new and carried), flags
    per judged checkpoint and the mean confidence."""
    rows: dict[str, dict[str, Any]] = {}
    for flag in flags:
        row = rows.setdefault(flag.criteria, {
            "criterion": flag.criteria, "category": flag.category, "type": str(flag.type),
            "flags": 0, "carried": 0, "confidence": 0.0})
        row["flags"] += 1
        row["carried"] += flag.carried_over is not None
        row["confidence"] += flag.confidence
    for row in rows.values():
        row["new"] = row["flags"] - row["carried"]
        row["per_checkpoint"] = row["flags"] / judged if judged else None
        row["confidence"] = row["confidence"] / row["flags"]
    return sorted(rows.values(), key=lambda r: (-r["flags"], r["criterion"]))
