"""Clone groups from normalised block hashes; only the largest blocks of a nest are reported."""

from __future__ import annotations

from collections import defaultdict

from benchwright.metrics.languages.base import CloneCandidate
from benchwright.metrics.models import Clone


def find_clones(candidates: list[CloneCandidate]) -> list[Clone]:
    """Groups of two or more blocks with the same shape, outermost first."""
    groups: dict[str, list[CloneCandidate]] = defaultdict(list)
    for candidate in candidates:
        groups[candidate.digest].append(candidate)
    repeated = [g for g in groups.values() if len(g) > 1]
    repeated.sort(key=lambda g: -(g[0].end - g[0].start))
    covered: list[CloneCandidate] = []
    clones = []
    for group in repeated:
        fresh = [c for c in group if not any(_inside(c, big) for big in covered)]
        if len(fresh) < 2:
            continue
        covered += fresh
        clones.append(Clone(kind=fresh[0].kind, lines=fresh[0].end - fresh[0].start + 1,
                            instances=[f"{c.file}:{c.start}-{c.end}" for c in fresh]))
    return clones


def _inside(inner: CloneCandidate, outer: CloneCandidate) -> bool:
    return (inner.file == outer.file and outer.start <= inner.start
            and inner.end <= outer.end and inner is not outer)
