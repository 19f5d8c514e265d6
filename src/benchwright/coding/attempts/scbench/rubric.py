"""A checkpoint's rubric figures (the LLM judge's), for SCBench's rows: taken from our record
when the judge put them there, else counted from the checkpoint's `rubric.jsonl` as SCBench
counts it (one flag per line; `carried_over` marks a flag carried from the previous checkpoint;
`type` is verbosity or erosion). None when the checkpoint was not judged: SCBench then leaves
the rubric keys out of the row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchwright.coding.attempts.models import CheckpointRecord
from benchwright.errors import BenchwrightError
from benchwright.files.untrusted import read_untrusted_text

RUBRIC_JSONL = "rubric.jsonl"
TOTAL, CARRIED, VERBOSITY, EROSION = ("rubric_total_flags", "rubric_carried_over",
                                      "rubric_verbosity_flags", "rubric_erosion_flags")
MAX_RUBRIC_BYTES = 64 * 2**20


def rubric_figures(record: CheckpointRecord, folder: Path) -> dict[str, float] | None:
    """The four rubric counts, or None when the checkpoint was not judged."""
    found = _in_record(record.model_dump(mode="json"))
    if found is not None:
        return found
    return _counted(folder / RUBRIC_JSONL)


def _in_record(data: Any, depth: int = 0) -> dict[str, float] | None:
    """The first mapping in the record (searched three levels deep) holding the figures."""
    if not isinstance(data, dict) or depth > 3:
        return None
    if isinstance(data.get(TOTAL), (int, float)):
        return {k: float(data.get(k) or 0) for k in (TOTAL, CARRIED, VERBOSITY, EROSION)}
    for value in data.values():
        if (found := _in_record(value, depth + 1)) is not None:
            return found
    return None


def _counted(path: Path) -> dict[str, float] | None:
    if not path.is_file():
        return None
    try:
        text = read_untrusted_text(path, what="the rubric flags", max_bytes=MAX_RUBRIC_BYTES)
    except BenchwrightError:
        return None
    flags = [flag for flag in map(_parsed, text.splitlines()) if flag is not None]
    return {TOTAL: len(flags), CARRIED: sum("carried_over" in f for f in flags),
            VERBOSITY: sum(f.get("type") == "verbosity" for f in flags),
            EROSION: sum(f.get("type") == "erosion" for f in flags)}


def _parsed(line: str) -> dict[str, Any] | None:
    """One flag; a blank or broken line is skipped (as SCBench skips it)."""
    try:
        value = json.loads(line) if line.strip() else None
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
