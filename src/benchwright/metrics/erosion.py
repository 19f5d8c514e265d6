"""Quality of a checkpoint against the previous one: deltas, churn and symbol changes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from benchwright.metrics.models import SnapshotMetrics

_TRACKED = ("loc", "sloc", "lint", "lint_weighted", "astgrep", "astgrep_weighted", "cc_high",
            "cc_extreme", "clone_ratio", "verbosity", "erosion", "mi_mean")


class QualitySummary(BaseModel):
    """A checkpoint's code quality, kept in its journal record and in `quality.json`."""

    format: Literal["benchwright.quality/1"] = "benchwright.quality/1"
    """The record's format and version."""
    values: dict[str, float]
    """The tracked figures of this snapshot (loc, lint, ast-grep, CC high, erosion, ...)."""
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


def tracked_values(metrics: SnapshotMetrics) -> dict[str, float]:
    """The figures followed from checkpoint to checkpoint."""
    flat: dict[str, Any] = {"loc": metrics.lines.loc, "sloc": metrics.lines.sloc,
                            "lint": sum(metrics.lint.values()),
                            "astgrep": sum(metrics.astgrep_rules.values())}
    return {k: float(flat[k] if k in flat else getattr(metrics, k)) for k in _TRACKED}


def summarise(current: SnapshotMetrics, previous: SnapshotMetrics | None,
              diff: dict[str, Any]) -> QualitySummary:
    """This checkpoint's quality and its change since the previous one."""
    values = tracked_values(current)
    summary = QualitySummary(values=values, mass=current.mass)
    if previous is None:
        return summary
    before = tracked_values(previous)
    delta = {k: round(values[k] - before[k], 4) for k in values}
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
