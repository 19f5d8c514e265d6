"""How complexity, nesting, size and branching spread over a snapshot's functions and methods,
as SCBench summarises them: means, the largest values, and concentration (a Gini coefficient
over the non-zero values: 0 when every callable carries the same, towards 1 when one carries
all)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from pydantic import BaseModel

from benchwright.metrics.models import SymbolMetrics
from benchwright.stats.estimates import gini

HIGH_CC, EXTREME_CC = 10, 30
"""SCBench's thresholds: above 10 is high (extreme ones included), above 30 extreme."""
NORMALIZED_CC_CAP = 50


class Spread(BaseModel):
    """Statistics over callables; the families SCBench follows."""

    count: int = 0
    """Functions and methods."""
    cc_sum: int = 0
    """Their complexities, summed."""
    cc_max: int = 0
    """Largest cyclomatic complexity."""
    cc_mean: float = 0.0
    """Mean complexity."""
    cc_std: float = 0.0
    """Sample standard deviation of complexity (0 for one callable)."""
    cc_high_count: int = 0
    """Callables above 10 (those above 30 included)."""
    cc_extreme_count: int = 0
    """Callables above 30."""
    high_cc_mean: float = 0.0
    """Mean complexity of the callables above 10."""
    extreme_cc_mean: float = 0.0
    """Mean complexity of the callables above 30."""
    cc_normalized: float = 0.0
    """0 when complexity is spread evenly, 1 when it all sits in one callable (sums of squares
    between those two cases; the worst case is at least 50)."""
    cc_concentration: float = 0.0
    """Concentration of complexity."""
    depth_max: int | None = 0
    """Deepest nesting of control blocks (None: the metrics predate nesting)."""
    lines_sum: int = 0
    """Lines of every callable, summed."""
    lines_mean: float = 0.0
    """Mean lines per callable."""
    lines_concentration: float = 0.0
    """Concentration of lines."""
    statements_sum: int = 0
    """Statements of every callable, summed."""
    statements_mean: float = 0.0
    """Mean statements per callable."""
    statements_concentration: float = 0.0
    """Concentration of statements."""
    nesting_mean: float | None = 0.0
    """Mean nesting depth (None: the metrics predate nesting; also below)."""
    nesting_concentration: float | None = 0.0
    """Concentration of nesting depth."""
    nesting_high_count: int | None = 0
    """Callables nesting deeper than 3."""
    comparisons_mean: float = 0.0
    """Mean comparisons per callable."""
    comparisons_concentration: float = 0.0
    """Concentration of comparisons."""
    comparisons_high_count: int = 0
    """Callables with more than 5 comparisons."""
    branches_mean: float = 0.0
    """Mean branches per callable."""
    branches_concentration: float = 0.0
    """Concentration of branches."""
    branches_high_count: int = 0
    """Callables with more than 5 branches."""
    control_mean: float | None = 0.0
    """Mean control blocks directly in a callable's body."""
    control_concentration: float | None = 0.0
    """Concentration of those control blocks."""
    control_high_count: int | None = 0
    """Callables with more than 5 of them."""
    control_blocks_sum: int | None = 0
    """Those control blocks, summed."""


def concentration(values: Sequence[float]) -> float:
    """Gini over the non-zero values; 0 when fewer than two are non-zero."""
    non_zero = [v for v in values if v > 0]
    return gini(non_zero) if len(non_zero) > 1 else 0.0


def normalized_complexity(values: Sequence[int]) -> float:
    """Where the sum of squared complexities lies between an even spread (0) and all of it in
    one callable, at least NORMALIZED_CC_CAP (1)."""
    if not values:
        return 0.0
    total = sum(values)
    even = len(values) * (total / len(values)) ** 2
    worst = max(total, NORMALIZED_CC_CAP) ** 2
    return 0.0 if worst <= even else (sum(v * v for v in values) - even) / (worst - even)


def spread(symbols: Sequence[SymbolMetrics]) -> Spread:
    """The statistics of the snapshot's functions and methods (classes are left out)."""
    callables = [s for s in symbols if s.kind != "class"]
    if not callables:
        return Spread()
    cc = [s.complexity for s in callables]
    high, extreme = [c for c in cc if c > HIGH_CC], [c for c in cc if c > EXTREME_CC]
    control = _known([s.control_blocks for s in callables])
    return Spread(
        count=len(cc), cc_sum=sum(cc), cc_max=max(cc), cc_mean=statistics.mean(cc),
        cc_std=statistics.stdev(cc) if len(cc) > 1 else 0.0, cc_high_count=len(high),
        cc_extreme_count=len(extreme), high_cc_mean=statistics.mean(high) if high else 0.0,
        extreme_cc_mean=statistics.mean(extreme) if extreme else 0.0,
        cc_normalized=normalized_complexity(cc), cc_concentration=concentration(cc),
        lines_sum=sum(s.lines for s in callables),
        statements_sum=sum(s.statements for s in callables),
        control_blocks_sum=None if control is None else sum(control),
        depth_max=None if (depth := _known([s.max_nesting_depth for s in callables])) is None
        else max(depth),
        **_family("lines", [s.lines for s in callables]),
        **_family("statements", [s.statements for s in callables]),
        **_family("comparisons", [s.comparisons for s in callables], high=5),
        **_family("branches", [s.branches for s in callables], high=5),
        **_family("nesting", _known([s.max_nesting_depth for s in callables]), high=3),
        **_family("control", control, high=5),
    )


def _known(values: list[int | None]) -> list[int] | None:
    """The values, or None when any is unknown (metrics written before the field existed)."""
    return None if any(v is None for v in values) else [v for v in values if v is not None]


def _family(name: str, values: list[int] | None, high: int | None = None
            ) -> dict[str, float | int | None]:
    """`<name>_mean`, `<name>_concentration` and, with a threshold, `<name>_high_count`."""
    found: dict[str, float | int | None] = {
        f"{name}_mean": None if values is None else statistics.mean(values),
        f"{name}_concentration": None if values is None else concentration(values)}
    if high is not None:
        found[f"{name}_high_count"] = None if values is None else sum(v > high for v in values)
    return found
