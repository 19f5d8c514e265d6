"""Waste: single-use functions, trivial wrappers and single-method classes."""

from __future__ import annotations

from collections import Counter

from benchwright.metrics.languages.base import ClassInfo, Definition

_EXEMPT = {"main", "__init__", "__main__"}


def single_use(definitions: list[Definition], calls: Counter[str]) -> list[str]:
    """Functions and methods called from exactly one place (by simple name, over the snapshot)."""
    names = Counter(d.name for d in definitions)
    return [f"{d.file}:{d.qualname}" for d in definitions
            if calls[d.name] == 1 and names[d.name] == 1 and not _special(d.name)]


def trivial_wrappers(definitions: list[Definition]) -> list[str]:
    """Functions whose body is one call."""
    return [f"{d.file}:{d.qualname}" for d in definitions
            if d.trivial_wrapper and not _special(d.name)]


def single_method_classes(classes: list[ClassInfo]) -> list[str]:
    """Classes with exactly one method besides `__init__`."""
    return [f"{c.file}:{c.qualname}" for c in classes
            if len([m for m in c.methods if m != "__init__"]) == 1]


def _special(name: str) -> bool:
    return name in _EXEMPT or (name.startswith("__") and name.endswith("__")) \
        or name.startswith("test_")
