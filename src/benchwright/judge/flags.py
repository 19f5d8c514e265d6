"""A checkpoint's final flags (the lines of `rubric.jsonl`, SCBench's shape) and their counts."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel

from benchwright.judge.rubric import Rubric, RubricType
from benchwright.judge.verdicts import Flag
from benchwright.metrics.erosion import RubricCounts

LINE_TOLERANCE = 2
"""Two flags of one item and file are the same flag when their starts are this close
(SCBench's carry-forward rule; also how samples are matched)."""


class RubricFlag(BaseModel):
    """One line of rubric.jsonl: the model's flag, its file, its item's category and type, and
    for a flag carried from an earlier checkpoint the checkpoint that first raised it."""

    criteria: str
    """The rubric item."""
    start: int
    """First line, in this checkpoint's file."""
    end: int
    """Last line."""
    explanation: str | None = None
    """Why (when the model gave a reason)."""
    confidence: int
    """1 to 5."""
    file_name: str
    """The file, relative to the snapshot."""
    category: str
    """The item's category."""
    type: RubricType
    """verbosity or erosion."""
    carried_over: str | None = None
    """The checkpoint the flag was first raised at, when carried forward."""

    def same_place(self, other: RubricFlag | Flag, start: int | None = None) -> bool:
        """Same item and file, starts within LINE_TOLERANCE (`start` replaces this flag's)."""
        mine = self.start if start is None else start
        return (self.criteria == other.criteria and self.file_name == other.file_name
                and abs(mine - other.start) <= LINE_TOLERANCE)

    def line(self) -> str:
        """Its rubric.jsonl line (absent fields left out, as SCBench writes them)."""
        return self.model_dump_json(exclude_none=True)


def annotated(flag: Flag, rubric: Rubric) -> RubricFlag:
    """A validated flag with its item's category and type."""
    item = rubric.item(flag.criteria)
    assert item is not None  # flags naming unknown items were dropped
    return RubricFlag(criteria=flag.criteria, start=flag.start, end=flag.end,
                      explanation=flag.explanation, confidence=flag.confidence,
                      file_name=flag.file_name, category=item.category, type=item.type)


def count_flags(flags: list[RubricFlag], loc: float | None) -> RubricCounts:
    """SCBench's rubric metrics of a checkpoint; per-LOC figures need LOC > 0."""
    total = len(flags)
    carried = sum(f.carried_over is not None for f in flags)
    per = (lambda n: n / loc) if loc else (lambda _n: None)
    return RubricCounts(
        total_flags=total, carried_over=carried,
        verbosity_flags=sum(f.type == "verbosity" for f in flags),
        erosion_flags=sum(f.type == "erosion" for f in flags),
        per_loc=per(total), new_violations_per_loc=per(total - carried),
        by_category=dict(sorted(Counter(f.category for f in flags).items())))
