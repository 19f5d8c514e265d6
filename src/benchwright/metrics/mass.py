"""SCBench's "mass": per function or method, max(0, value - baseline) * sqrt(statements), summed
over the snapshot, for six measures; how concentrated it is, how few callables hold half (75%,
90%) of the complexity mass, and how it moved between two snapshots. Keys are SCBench's
(`mass.complexity`, `delta.mass.complexity_added_top90_count`, ...).

Not `metrics.static`'s own mass, which uses higher baselines (a callable is charged only above a
healthy value): this one follows SCBench's definition so its figures compare with SCBench runs."""

from __future__ import annotations

import math
from collections.abc import Sequence

from benchwright.metrics.models import SymbolMetrics
from benchwright.metrics.spread import HIGH_CC, concentration

# measure (our field) -> SCBench's key; complexity is charged from 2 on, the others from 1
MEASURES = {"complexity": "complexity", "branches": "branches", "comparisons": "comparisons",
            "variables_used": "vars_used", "variables_defined": "vars_defined",
            "exception_scaffold": "try_scaffold"}
BASELINES = {"complexity": 1}
TOPS = (50, 75, 90)
_TINY = 1e-9


def symbol_mass(symbol: SymbolMetrics, measure: str) -> float:
    """One callable's mass for one measure."""
    value = getattr(symbol, measure) or 0
    excess = max(0, value - BASELINES.get(measure, 0))
    return excess * math.sqrt(max(1, symbol.statements))


def measures_of(callables: Sequence[SymbolMetrics]) -> list[str]:
    """The measures every callable has (metrics written before some fields lack them)."""
    return [m for m in MEASURES if all(getattr(s, m) is not None for s in callables)]


def tops(masses: Sequence[float], percents: Sequence[int] = TOPS,
         prefix: str = "mass.") -> dict[str, float]:
    """For each percent: how many of the largest masses reach that share of the total, and
    their sum (`{prefix}top90_count`, `{prefix}top90_mass`)."""
    ordered, total = sorted(masses, reverse=True), math.fsum(masses)
    found: dict[str, float] = {}
    for percent in percents:
        count, running = 0, 0.0
        if total >= _TINY:
            for mass in ordered:
                count, running = count + 1, running + mass
                if running >= total * percent / 100:
                    break
        found[f"{prefix}top{percent}_count"] = count
        found[f"{prefix}top{percent}_mass"] = round(running, 2)
    return found


def snapshot_mass(symbols: Sequence[SymbolMetrics]) -> dict[str, float]:
    """`mass.<measure>`, `mass.<measure>_concentration`, the tops of the complexity mass,
    `mass.high_cc` (the mass of callables above complexity 10) and its share in percent."""
    callables = [s for s in symbols if s.kind != "class"]
    found: dict[str, float] = {}
    for measure in measures_of(callables):
        masses = [symbol_mass(s, measure) for s in callables]
        found[f"mass.{MEASURES[measure]}"] = round(math.fsum(masses), 2)
        found[f"mass.{MEASURES[measure]}_concentration"] = round(concentration(masses), 3)
    complexity = [symbol_mass(s, "complexity") for s in callables]
    high = math.fsum(symbol_mass(s, "complexity") for s in callables if s.complexity > HIGH_CC)
    total = math.fsum(complexity)
    found |= tops(complexity)
    found["mass.high_cc"] = round(high, 2)
    found["mass.high_cc_pct"] = round(high / total * 100 if total else 0.0, 1)
    return found
