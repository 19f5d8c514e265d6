"""Import-graph metrics over the modules reachable from the entry file."""

from __future__ import annotations

import math
from pathlib import PurePosixPath

from benchwright.metrics.models import GraphMetrics


def resolve_imports(path: str, imports: list[tuple[str, int]], files: set[str]) -> set[str]:
    """The snapshot files an importing file's imports point at."""
    found = set()
    package = PurePosixPath(path).parent
    for module, level in imports:
        base = package
        for _ in range(max(level - 1, 0)):
            base = base.parent
        parts = [p for p in module.split(".") if p]
        stem = (base.joinpath(*parts) if level else PurePosixPath(*parts)) if parts else base
        for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
            candidate = candidate.removeprefix("./")
            if candidate in files and candidate != path:
                found.add(candidate)
    return found


def graph_metrics(entry: str | None, edges: dict[str, set[str]],
                  sloc: dict[str, int]) -> GraphMetrics:
    """Cyclic dependency mass, propagation cost and fan-in entropy from the entry file."""
    if entry is None or entry not in edges:
        return GraphMetrics(entry=entry)
    nodes = sorted(_reachable(entry, edges))
    sub = {n: edges.get(n, set()) & set(nodes) for n in nodes}
    closure = {n: _reachable(n, sub) for n in nodes}
    on_cycle = {n for n in nodes if any(n in closure[m] for m in sub[n])}
    total = sum(sloc.get(n, 0) for n in nodes) or 1
    return GraphMetrics(
        entry=entry, modules=len(nodes), edges=sum(len(v) for v in sub.values()),
        cyclic_dependency_mass=round(sum(sloc.get(n, 0) for n in on_cycle) / total, 4),
        propagation_cost=round(sum(len(c) for c in closure.values()) / len(nodes) ** 2, 4),
        dependency_entropy=round(_fan_in_entropy(sub), 4),
    )


def _reachable(start: str, edges: dict[str, set[str]]) -> set[str]:
    seen, stack = {start}, [start]
    while stack:
        for nxt in edges.get(stack.pop(), set()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _fan_in_entropy(edges: dict[str, set[str]]) -> float:
    fan_in = {n: 0 for n in edges}
    for targets in edges.values():
        for target in targets:
            fan_in[target] += 1
    total = sum(fan_in.values())
    if total == 0 or len(fan_in) < 2:
        return 0.0
    probs = [v / total for v in fan_in.values() if v]
    return -sum(p * math.log2(p) for p in probs) / math.log2(len(fan_in))
