"""Quality of a checkpoint against the previous one: deltas, churn and symbol changes; and the
LLM judge's rubric flags added to it (`with_rubric`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from benchwright.metrics.models import SnapshotMetrics

_TRACKED = ("loc", "sloc", "lint", "lint_weighted", "astgrep", "astgrep_weighted", "cc_high",
            "cc_extreme", "clone_ratio", "bw_verbosity", "bw_erosion", "mi_mean")
SCBENCH_VALUES = ("verbosity", "erosion", "cog_erosion", "total_loc", "verbosity_flagged_loc",
                  "clone_loc", "ast_grep_flagged_loc", "total_mass", "high_cc_mass",
                  "total_cog_mass", "high_cog_mass")
"""SCBench's figures (scb-check's report keys) kept in `QualitySummary.values` when known."""
# Version 1 kept benchwright's own composites under SCBench's names.
_RENAMED = {"verbosity": "bw_verbosity", "erosion": "bw_erosion",
            "verbosity_static": "bw_verbosity_static"}


class RubricCounts(BaseModel):
    """A checkpoint's rubric flags from the LLM judge, counted (SCBench's rubric metrics)."""

    total_flags: int
    """Flags in rubric.jsonl, carried ones included (SCBench: `rubric_total_flags`)."""
    carried_over: int
    """Of them, flags carried from the previous checkpoint (`rubric_carried_over`)."""
    verbosity_flags: int
    """Flags of verbosity items (`rubric_verbosity_flags`)."""
    erosion_flags: int
    """Flags of erosion items (`rubric_erosion_flags`)."""
    per_loc: float | None = None
    """total_flags / LOC (`rubric_per_loc`); None without LOC (metrics off, or no lines)."""
    new_violations_per_loc: float | None = None
    """(total_flags - carried_over) / LOC (SCBench: `delta.new_violations_per_loc`, written there
    from the second checkpoint on)."""
    by_category: dict[str, int] = Field(default_factory=dict)
    """Flags per rubric category."""


RUBRIC_VALUES = {"rubric_total_flags": "total_flags", "rubric_carried_over": "carried_over",
                 "rubric_verbosity_flags": "verbosity_flags",
                 "rubric_erosion_flags": "erosion_flags", "rubric_per_loc": "per_loc",
                 "new_violations_per_loc": "new_violations_per_loc"}
"""The keys rubric metrics take in `QualitySummary.values`, and their `RubricCounts` field."""


class QualitySummary(BaseModel):
    """A checkpoint's code quality, kept in its journal record and in `quality.json`."""

    format: Literal["benchwright.quality/1", "benchwright.quality/2"] = "benchwright.quality/2"
    """The record's format and version (2: `verbosity`, `erosion` and `cog_erosion` are SCBench's,
    by scb-check; version 1's, benchwright's own composites, are read as `bw_verbosity` and
    `bw_erosion`)."""
    values: dict[str, float]
    """The tracked figures of this snapshot (loc, lint, ast-grep, CC high, ...), and SCBench's
    (`SCBENCH_VALUES`) when scb-check measured them: absent when unknown, never 0."""
    mass: dict[str, float] = Field(default_factory=dict)
    """Mass per measure (complexity, branches, comparisons)."""
    delta: dict[str, float] = Field(default_factory=dict)
    """Each tracked figure and mass minus the previous checkpoint's (empty at the first)."""
    churn_ratio: float = 0.0
    """(lines added + lines removed) / the previous snapshot's LOC (at the first: 0)."""
    symbols_added: list[str] = Field(default_factory=list)
    """Callables and classes that are new."""
    symbols_removed: list[str] = Field(default_factory=list)
    """Callables and classes that are gone."""
    symbols_modified: list[str] = Field(default_factory=list)
    """Callables and classes whose body changed."""
    rubric: RubricCounts | None = None
    """The LLM judge's flags, once the checkpoint is judged; `values` then also holds them
    (`RUBRIC_VALUES`), `bw_verbosity` includes rubric flags per LOC and `bw_verbosity_static`
    keeps the composite without them."""

    @model_validator(mode="before")
    @classmethod
    def _version_1(cls, data: Any) -> Any:
        """Version 1's own composites under their own names."""
        if not isinstance(data, dict) or data.get("format") != "benchwright.quality/1":
            return data
        renamed = {key: {_RENAMED.get(k, k): v for k, v in data[key].items()}
                   for key in ("values", "delta") if isinstance(data.get(key), dict)}
        return data | renamed | {"format": "benchwright.quality/2"}  # read, it is version 2


def tracked_values(metrics: SnapshotMetrics) -> dict[str, float]:
    """The figures followed from checkpoint to checkpoint."""
    flat: dict[str, Any] = {"loc": metrics.lines.loc, "sloc": metrics.lines.sloc,
                            "lint": sum(metrics.lint.values()),
                            "astgrep": sum(metrics.astgrep_rules.values())}
    values = {k: float(flat[k] if k in flat else getattr(metrics, k)) for k in _TRACKED}
    figures = metrics.scbench.figures if metrics.scbench is not None else None
    if figures is not None:
        values |= {k: float(getattr(figures, k)) for k in SCBENCH_VALUES}
    return values


def summarise(current: SnapshotMetrics, previous: SnapshotMetrics | None,
              diff: dict[str, Any]) -> QualitySummary:
    """This checkpoint's quality and its change since the previous one."""
    values = tracked_values(current)
    summary = QualitySummary(values=values, mass=current.mass)
    if previous is None:
        return summary
    before = tracked_values(previous)
    delta = {k: round(values[k] - before[k], 4) for k in values if k in before}
    delta |= {f"mass.{k}": round(v - previous.mass.get(k, 0.0), 3)
              for k, v in current.mass.items()}
    changed = int(diff.get("lines_added", 0)) + int(diff.get("lines_removed", 0))
    old, new = _symbols(previous), _symbols(current)
    return summary.model_copy(update={
        "delta": delta,
        "churn_ratio": round(changed / max(previous.lines.loc, 1), 4),
        "symbols_added": sorted(set(new) - set(old)),
        "symbols_removed": sorted(set(old) - set(new)),
        "symbols_modified": sorted(k for k in set(old) & set(new) if old[k] != new[k]),
    })


def _symbols(metrics: SnapshotMetrics) -> dict[str, str]:
    return {f"{s.file}:{s.name}": s.body_hash for s in metrics.symbols}


def with_rubric(summary: QualitySummary, counts: RubricCounts,
                previous: QualitySummary | None) -> QualitySummary:
    """The summary with the judge's flags: their values, our own verbosity composite with
    rubric flags per LOC added (SCBench's pre-1.0 definition), and their change since
    `previous` (none at the first checkpoint). Applying it again replaces the earlier flags."""
    values = dict(summary.values)
    static = values.get("bw_verbosity_static" if summary.rubric else "bw_verbosity")
    if static is not None:
        values["bw_verbosity_static"] = static
        values["bw_verbosity"] = round(static + (counts.per_loc or 0.0), 4)
    for key, field in RUBRIC_VALUES.items():
        value = getattr(counts, field)
        if value is not None:
            values[key] = float(value)
        else:
            values.pop(key, None)
    delta = dict(summary.delta)
    if previous is not None:
        for key in ("bw_verbosity", *RUBRIC_VALUES):
            if key != "new_violations_per_loc" and key in values and key in previous.values:
                delta[key] = round(values[key] - previous.values[key], 4)
    return summary.model_copy(update={"values": values, "delta": delta, "rubric": counts})
