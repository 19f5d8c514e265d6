"""One flat row of SCBench's `checkpoint_results.jsonl` per finished checkpoint, built from our
records: the journal record, grading.json, quality_analysis/metrics.json and diff.json.

Keys, their order and their types are SCBench's (see docs/scbench-files.md for where each comes
from). As SCBench does: quality keys are left out when the checkpoint has no metrics, rubric keys
when it was not judged, per-LOC ratios when there are no lines of code, and every `delta.*` at
a problem's first checkpoint; a percent change from zero is infinite."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from benchwright.coding.agents.base import AgentStatus
from benchwright.coding.attempts.models import CheckpointRecord
from benchwright.coding.grading.evaluation import CheckpointEvaluation
from benchwright.coding.problems.config import Group
from benchwright.metrics.astgrep import CATEGORIES
from benchwright.metrics.mass import snapshot_mass
from benchwright.metrics.mass_delta import mass_delta
from benchwright.metrics.models import SnapshotMetrics
from benchwright.metrics.scbcheck import report_keys
from benchwright.metrics.spread import spread

Row = dict[str, Any]
PERCENT_DELTAS = ("loc", "lint_errors", "ast_grep_violations", "cc_high_count", "comparisons")
SCBENCH_FIGURES = ("verbosity", "erosion", "cog_erosion")
"""SCBench v1.0's headline figures (scb-check's keys); their parts keep scb-check's keys too."""
RUBRIC_KEYS = ("rubric_total_flags", "rubric_carried_over", "rubric_verbosity_flags",
               "rubric_erosion_flags")


@dataclass
class CheckpointInputs:
    """What one row is made of."""

    record: CheckpointRecord
    path: str
    """The attempt's folder, relative to the run folder."""
    idx: int
    """The checkpoint's `order` in the problem."""
    is_last: bool
    grading: CheckpointEvaluation | None = None
    metrics: SnapshotMetrics | None = None
    diff: dict[str, Any] | None = None
    rubric: dict[str, float] | None = None
    """The rubric figures (RUBRIC_KEYS), when the checkpoint was judged."""


def checkpoint_row(inputs: CheckpointInputs, previous: tuple[Row, SnapshotMetrics | None] | None
                   ) -> Row:
    """The row of one checkpoint; `previous` is the row and metrics of the one before it."""
    record = inputs.record
    row: Row = {
        "problem": record.problem, "trial": record.trial,
        "version": inputs.grading.problem_version if inputs.grading else None,
        "checkpoint": record.checkpoint, "path": inputs.path, "idx": inputs.idx,
        "state": "error" if record.agent.status in (AgentStatus.ERROR, AgentStatus.TIMEOUT)
        else "ran",
        "is_first": record.index == 1, "is_last": inputs.is_last,
        **_tests(record, inputs.grading), **_inference(record),
    }
    if inputs.metrics is not None:
        row |= quality(inputs.metrics, inputs.diff)
    if inputs.rubric is not None:
        row |= {k: int(inputs.rubric[k]) for k in RUBRIC_KEYS}
        if row.get("loc", 0) > 0:
            row["rubric_per_loc"] = row["rubric_total_flags"] / row["loc"]
    if previous is not None and inputs.metrics is not None and previous[1] is not None:
        row |= deltas(previous[0], row)
        row |= mass_delta(previous[1].symbols, inputs.metrics.symbols)
    return row


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


def _tests(record: CheckpointRecord, grading: CheckpointEvaluation | None) -> Row:
    """Pass rates and counts per group (a rate over no tests is 0.0)."""
    counts = {group: record.counts.get(group) for group in Group}
    passed = {g: c.passed if c else 0 for g, c in counts.items()}
    total = {g: c.total if c else 0 for g, c in counts.items()}
    all_passed, all_total = sum(passed.values()), sum(total.values())
    own_passed = all_passed - passed[Group.REGRESSION]
    own_total = all_total - total[Group.REGRESSION]
    row: Row = {
        "pass_rate": _ratio(all_passed, all_total),
        "core_pass_rate": _ratio(passed[Group.CORE], total[Group.CORE]),
        "checkpoint_pass_rate": _ratio(own_passed, own_total),
        "duration": grading.duration_s if grading else record.grade_duration_s,
        "total_tests": all_total, "passed_tests": all_passed,
    }
    for group in Group:
        row[f"{group.value.lower()}_total"] = total[group]
        row[f"{group.value.lower()}_passed"] = passed[group]
    return row


def _inference(record: CheckpointRecord) -> Row:
    """The agent's turn: when, how long, what it spent (tokens as SCBench splits them)."""
    agent = record.agent
    usage = agent.usage
    return {"started": agent.started_at, "ended": agent.ended_at, "elapsed": agent.duration_s,
            "cost": usage.cost_usd, "steps": usage.steps,
            "input": max(usage.input_tokens - usage.cached_input_tokens, 0),
            "output": usage.output_tokens, "cache_read": usage.cached_input_tokens,
            "cache_write": 0, "reasoning": 0}


def quality(metrics: SnapshotMetrics, diff: dict[str, Any] | None) -> Row:
    """Every code-quality key of a row, from the snapshot's metrics."""
    callables = [s for s in metrics.symbols if s.kind != "class"]
    kinds = {kind: sum(s.kind == kind for s in metrics.symbols)
             for kind in ("function", "method", "class")}
    variables = sum(f.variables or 0 for f in metrics.files)
    loc, lint = metrics.lines.sloc, sum(metrics.lint.values())
    violations = sum(metrics.astgrep_rules.values())
    stats = spread(metrics.symbols)
    row: Row = {
        "loc": loc, "total_lines": metrics.lines.loc,
        "single_comments": metrics.lines.single_comments, "lint_errors": lint,
        "lint_fixable": metrics.lint_fixable, "files": len(metrics.files),
        "functions": kinds["function"], "methods": kinds["method"], "classes": kinds["class"],
        "statements": sum(s.statements for s in metrics.symbols) + variables,
        "symbols_total": len(metrics.symbols) + variables,
        "cc_max": stats.cc_max, "cc_mean": stats.cc_mean, "cc_std": stats.cc_std,
        "cc_high_count": stats.cc_high_count, "cc_extreme_count": stats.cc_extreme_count,
        "high_cc_mean": stats.high_cc_mean, "cc_normalized": stats.cc_normalized,
        "cc_concentration": stats.cc_concentration, "max_nesting_depth": stats.depth_max,
        "lines_per_symbol": stats.lines_mean,
        "single_use_functions": len(metrics.single_use_functions),
        "trivial_wrappers": len(metrics.trivial_wrappers),
        "single_method_classes": len(metrics.single_method_classes),
        "clone_instances": metrics.clone_instances, "clone_lines": metrics.clone_lines,
        **{f"{family}_{what}": getattr(stats, f"{family}_{what}")
           for family in ("nesting", "comparisons", "branches", "control")
           for what in ("mean", "concentration")},
        "lines_concentration": stats.lines_concentration,
        "statements_mean": stats.statements_mean,
        "statements_concentration": stats.statements_concentration,
        "ast_grep_violations": violations,
        "source_file_count": metrics.graph.modules if metrics.graph.entry else len(metrics.files),
        **{f"sg_{c}_violations": metrics.astgrep.get(c, 0) for c in CATEGORIES},
    }
    if loc > 0:
        row |= {"ast_grep_per_loc": violations / loc, "lint_per_loc": lint / loc}
    return (row | _graph(metrics) | _changes(metrics, diff, callables) | snapshot_mass(callables)
            | report_keys(metrics.scbench))


def _graph(metrics: SnapshotMetrics) -> Row:
    graph = metrics.graph
    return {"graph_cyclic_dependency_mass": graph.cyclic_dependency_mass,
            "graph_propagation_cost": graph.propagation_cost,
            "graph_dependency_entropy": graph.dependency_entropy}


def _changes(metrics: SnapshotMetrics, diff: dict[str, Any] | None,
             callables: list[Any]) -> Row:
    """Lines added and removed in the measured files; per-callable size and scaffolding."""
    added, removed = changed_lines(diff, {f.path for f in metrics.files})
    scaffold = [s.exception_scaffold for s in callables]
    return {"lines_added": added, "lines_removed": removed,
            "mean_func_loc": statistics.mean(s.lines for s in callables) if callables else 0.0,
            "comparisons": sum(s.comparisons for s in callables),
            "try_scaffold": None if None in scaffold else sum(v or 0 for v in scaffold)}


def changed_lines(diff: dict[str, Any] | None, files: set[str]) -> tuple[int, int]:
    """Lines added and removed in `files` by the checkpoint (diff.json's per-file counts; a
    diff written before those were kept gives its totals over every file)."""
    if not isinstance(diff, dict):
        return 0, 0
    per_file = diff.get("file_diffs")
    if not isinstance(per_file, dict):
        return int(diff.get("lines_added", 0)), int(diff.get("lines_removed", 0))
    kept = [v for k, v in per_file.items() if k in files and isinstance(v, dict)]
    return (sum(int(v.get("lines_added", 0)) for v in kept),
            sum(int(v.get("lines_removed", 0)) for v in kept))


def percent_change(before: float | None, after: float | None) -> float:
    """(after - before) / before in percent; 0 from 0 to 0, infinite from 0 to more."""
    old, new = before or 0, after or 0
    if old == 0:
        return 0.0 if new == old else math.inf
    return (new - old) / old * 100


def deltas(before: Row, after: Row) -> Row:
    """The percent changes, the churn ratio, the change of SCBench's figures (absolute: they are
    shares already; only when both are known) and the new rubric flags per line of code."""
    found: Row = {f"delta.{k}": percent_change(before.get(k), after.get(k))
                  for k in PERCENT_DELTAS}
    churn = after["lines_added"] + after["lines_removed"]
    found["delta.churn_ratio"] = _ratio_or_inf(churn, before["total_lines"])
    found |= {f"delta.{k}": after[k] - before[k] for k in SCBENCH_FIGURES
              if k in after and k in before}
    if "rubric_total_flags" in after:
        new_flags = after["rubric_total_flags"] - after["rubric_carried_over"]
        found["delta.new_violations_per_loc"] = _ratio_or_inf(new_flags, after["loc"])
    return found


def _ratio_or_inf(numerator: float, denominator: float) -> float:
    if denominator == 0:
        return 0.0 if numerator == 0 else math.inf
    return numerator / denominator
