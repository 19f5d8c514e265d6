"""SCBench's run statistics from the rows of checkpoint_results.jsonl, with SCBench's definitions
(its solve rates count rows, i.e. checkpoints reached; ours in result.json count every planned
checkpoint: both are kept, under their own names)."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from benchwright.coding.attempts.scbench.summary_models import (
    ComplexityStats,
    CostStats,
    Deltas,
    MetricStats,
    PassRates,
    PassRatesByType,
    PerLevel,
    Ratios,
    ScbenchSummary,
    TokenMeans,
    TokenStats,
)
from benchwright.llm.pricing import CostSum

Row = dict[str, Any]
TOKENS = ("input", "output", "cache_read", "cache_write", "reasoning")
GROUPS = ("core", "error", "functionality", "regression")


def metric_stats(values: Iterable[float]) -> MetricStats:
    """Mean, sample std, min, max, median and count."""
    data = list(values)
    if not data:
        return MetricStats()
    return MetricStats(mean=statistics.mean(data),
                       stddev=statistics.stdev(data) if len(data) > 1 else None,
                       min=min(data), max=max(data), median=statistics.median(data),
                       count=len(data))


def _values(rows: list[Row], key: str) -> list[float]:
    return [row[key] for row in rows if row.get(key) is not None]


def _by_problem(rows: list[Row]) -> dict[str, list[Row]]:
    grouped: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        grouped[row["problem"]].append(row)
    return grouped


def _per_level(rows: list[Row], problems: dict[str, list[Row]], key: str) -> dict[str, Any]:
    return {"checkpoint": metric_stats(_values(rows, key)),
            "problem": metric_stats(sum(_values(chunk, key)) for chunk in problems.values())}


def _tokens(rows: list[Row], problems: dict[str, list[Row]]) -> TokenStats:
    def mean(values: list[float]) -> float:
        return statistics.mean(values) if values else 0.0
    return TokenStats(
        **{t: int(sum(_values(rows, t))) for t in TOKENS},
        checkpoint=TokenMeans(**{t: mean(_values(rows, t)) for t in TOKENS}),
        problem=TokenMeans(**{t: mean([sum(_values(c, t)) for c in problems.values()])
                              for t in TOKENS}))


def _solve_rates(rows: list[Row], problems: dict[str, list[Row]]) -> dict[str, float]:
    if not rows:
        return {}
    solved = sum(math.isclose(r.get("pass_rate", 0.0), 1.0) for r in rows)
    iso = sum(math.isclose(r.get("checkpoint_pass_rate", 0.0), 1.0) for r in rows)
    core = sum(math.isclose(r.get("core_pass_rate", 0.0), 1.0) for r in rows)
    full = sum(all(r.get("pass_rate") == 1.0 for r in c) for c in problems.values())
    partial = sum(any(r.get("pass_rate") == 1.0 for r in c) for c in problems.values())
    return {"checkpoints_solved": solved, "checkpoints_iso_solved": iso,
            "checkpoints_core_solved": core, "problem_solved": full, "problem_partial": partial,
            "pct_checkpoints_solved": solved / len(rows) * 100,
            "pct_checkpoints_iso_solved": iso / len(rows) * 100,
            "pct_checkpoints_core_solved": core / len(rows) * 100,
            "pct_problems_solved": full / len(problems) * 100,
            "pct_problems_partial": partial / len(problems) * 100}


def _group_rates(row: Row) -> dict[str, float | None]:
    """Each group's pass rate in this row (None without tests of it)."""
    def rate(passed: Any, total: Any) -> float | None:
        return passed / total if total and passed is not None else None
    return {"total": rate(row.get("passed_tests"), row.get("total_tests")),
            **{g: rate(row.get(f"{g}_passed"), row.get(f"{g}_total")) for g in GROUPS}}


def _mean_known(values: Iterable[float | None]) -> float:
    known = [v for v in values if v is not None]
    return statistics.mean(known) if known else 0.0


def _pass_rates(rows: list[Row], problems: dict[str, list[Row]]) -> PassRates:
    kinds = ("total", *GROUPS)
    per_row = [_group_rates(r) for r in rows]
    per_problem = [[_group_rates(r) for r in chunk] for chunk in problems.values()]
    return PassRates(
        checkpoint=PassRatesByType(**{k: _mean_known(r[k] for r in per_row) for k in kinds}),
        problem=PassRatesByType(**{k: _mean_known(_mean_known(r[k] for r in chunk)
                                                  for chunk in per_problem) for k in kinds}))


def _per_loc(rows: list[Row], key: str) -> list[float]:
    return [r[key] / r["loc"] for r in rows if r.get(key) is not None and r.get("loc")]


def _finite(rows: list[Row], key: str) -> list[float]:
    return [v for v in _values(rows, f"delta.{key}") if v != math.inf]


def _composites(rows: list[Row]) -> dict[str, MetricStats]:
    verbosity, erosion = [], []
    for row in rows:
        loc, callables = row.get("loc", 0), row.get("functions", 0) + row.get("methods", 0)
        if loc > 0 and callables > 0:
            flags = row.get("ast_grep_violations", 0) + row.get("rubric_total_flags", 0)
            verbosity.append(flags / loc + row.get("trivial_wrappers", 0) / callables
                             + row.get("single_use_functions", 0) / callables)
        if callables > 0:
            high = row.get("cc_high_count", 0) + 2 * row.get("cc_extreme_count", 0)
            erosion.append(high / callables + (row.get("lint_per_loc") or 0.0))
    scbench = {key: metric_stats(_values(rows, key))
               for key in ("verbosity", "erosion", "cog_erosion")}
    return scbench | {"bw_verbosity": metric_stats(verbosity),
                      "bw_erosion": metric_stats(erosion)}


def scbench_summary(identity: dict[str, Any], rows: list[Row]) -> ScbenchSummary:
    """The statistics; `identity` holds model, thinking, prompt, agent_type, agent_version."""
    problems = _by_problem(rows)
    return ScbenchSummary(
        **identity, num_problems=len(problems), num_checkpoints=len(rows),
        costs=CostStats(**_per_level(rows, problems, "cost"), total=CostSum.of(
            row.get("cost") for row in rows).usd),
        time=PerLevel(**_per_level(rows, problems, "elapsed")),
        tokens=_tokens(rows, problems), steps=PerLevel(**_per_level(rows, problems, "steps")),
        **_solve_rates(rows, problems), pass_rates=_pass_rates(rows, problems),
        cc=ComplexityStats(high_count=metric_stats(_values(rows, "cc_high_count")),
                           high_mean=metric_stats(_values(rows, "high_cc_mean")),
                           max=metric_stats(_values(rows, "cc_max"))),
        ratios=Ratios(rubric=metric_stats(_per_loc(rows, "rubric_total_flags")),
                      lint=metric_stats(_per_loc(rows, "lint_errors")),
                      ast_grep=metric_stats(_per_loc(rows, "ast_grep_violations"))),
        delta=Deltas(lint=metric_stats(_finite(rows, "lint_errors")),
                     complex=metric_stats(_finite(rows, "cc_high_count")),
                     ast_grep=metric_stats(_finite(rows, "ast_grep_violations")),
                     comparisons=metric_stats(_finite(rows, "comparisons")),
                     rubric_non_carryover=metric_stats(_finite(rows, "new_violations_per_loc"))),
        **_composites(rows),
    )
