"""How SCBench's mass moved between two snapshots: callables matched by file and name (then by
an unchanged body), the mass each added or shed, new and removed callables counted in full.
Keys are SCBench's (`delta.mass.complexity_added`, `delta.symbols_modified`, ...)."""

from __future__ import annotations

from collections.abc import Sequence
from math import fsum

from benchwright.metrics.mass import MEASURES, measures_of, symbol_mass, tops
from benchwright.metrics.models import SymbolMetrics
from benchwright.metrics.spread import concentration

_TINY = 1e-9
Pair = tuple[SymbolMetrics, SymbolMetrics]


def match(before: Sequence[SymbolMetrics], after: Sequence[SymbolMetrics],
          ) -> tuple[list[Pair], list[SymbolMetrics], list[SymbolMetrics]]:
    """(matched pairs, added, removed): by `file:name`, then left-overs by body hash."""
    old = {f"{s.file}:{s.name}": s for s in before}
    new = {f"{s.file}:{s.name}": s for s in after}
    pairs = [(old[k], new[k]) for k in old.keys() & new.keys()]
    left_old = {k: s for k, s in old.items() if k not in new}
    left_new = {k: s for k, s in new.items() if k not in old}
    by_hash = {s.body_hash: k for k, s in left_old.items() if s.body_hash}
    for key, symbol in list(left_new.items()):
        found = by_hash.pop(symbol.body_hash, None)
        if found is not None and found in left_old:
            pairs.append((left_old.pop(found), left_new.pop(key)))
    return sorted(pairs, key=lambda p: (p[1].file, p[1].start)), list(left_new.values()), \
        list(left_old.values())


def _moves(pairs: list[Pair], added: list[SymbolMetrics], removed: list[SymbolMetrics],
           measure: str) -> tuple[list[float], list[float], list[float], list[float]]:
    """(mass gained, mass shed, masses before, masses after) for one measure."""
    gained, shed, masses_before, masses_after = [], [], [], []
    for old, new in pairs:
        a, b = symbol_mass(old, measure), symbol_mass(new, measure)
        if b - a > _TINY:
            gained.append(b - a)
        elif a - b > _TINY:
            shed.append(a - b)
        masses_before.append(a)
        masses_after.append(b)
    for symbol in added:
        masses_after.append(mass := symbol_mass(symbol, measure))
        gained += [mass] if mass > _TINY else []
    for symbol in removed:
        masses_before.append(mass := symbol_mass(symbol, measure))
        shed += [mass] if mass > _TINY else []
    return gained, shed, masses_before, masses_after


def _complexity_suite(gained: list[float], shed: list[float]) -> dict[str, float]:
    key = "delta.mass.complexity"
    net, gross = fsum(gained) - fsum(shed), fsum(gained) + fsum(shed)
    return {f"{key}_added": round(fsum(gained), 2), f"{key}_added_count": len(gained),
            f"{key}_added_concentration": round(concentration(gained), 3),
            **tops(gained, prefix=f"{key}_added_"),
            f"{key}_removed": round(fsum(shed), 2), f"{key}_removed_count": len(shed),
            f"{key}_removed_concentration": round(concentration(shed), 3),
            f"{key}_gross": round(gross, 2),
            f"{key}_net_to_gross_ratio": round(net / gross if gross > _TINY else 0.0, 3)}


def mass_delta(before: Sequence[SymbolMetrics], after: Sequence[SymbolMetrics],
               ) -> dict[str, float]:
    """Every `delta.mass.*` and `delta.symbols_*` figure; empty when neither snapshot has a
    function or method (as SCBench)."""
    old = [s for s in before if s.kind != "class"]
    new = [s for s in after if s.kind != "class"]
    if not old and not new:
        return {}
    pairs, added, removed = match(old, new)
    found: dict[str, float] = {}
    for measure in measures_of([*old, *new]):
        gained, shed, *_ = _moves(pairs, added, removed, measure)
        key = MEASURES[measure]
        found[f"delta.mass.{key}"] = round(fsum(gained) - fsum(shed), 2)
        found |= _complexity_suite(gained, shed) if measure == "complexity" else \
            tops(gained, (90,), prefix=f"delta.mass.{key}_added_")
    _, _, masses_before, masses_after = _moves(pairs, added, removed, "complexity")
    top_before, top_after = tops(masses_before), tops(masses_after)
    for name, value in top_after.items():
        change = value - top_before[name]
        found[f"delta.{name}"] = round(change, 2) if name.endswith("_mass") else int(change)
    return found | {"delta.symbols_added": len(added), "delta.symbols_removed": len(removed),
                    "delta.symbols_modified": sum(
                        abs(symbol_mass(b, "complexity") - symbol_mass(a, "complexity")) > _TINY
                        for a, b in pairs)}
