"""Which way each figure is better: the viewer colours a change by it (a falling maintainability
index is a worsening, a falling lint count an improvement; a size has no good direction)."""

from __future__ import annotations

from typing import Literal

Better = Literal["higher", "lower", "none"]
"""higher / lower is better; none: neither (sizes, counts of things, unknown figures)."""

_HIGHER = ("mi", "maintainability", "solved", "passed", "pass_rate", "score", "alpha",
           "stability")
_LOWER = ("lint", "astgrep", "cc_high", "cc_extreme", "cc_mean", "cc_max", "clone", "verbosity",
          "erosion", "rubric", "violations", "flags", "cost", "tokens", "duration", "time",
          "steps", "nesting", "waste", "trivial", "unused", "single_use", "churn", "failed",
          "errors", "concentration", "propagation_cost", "dependency_entropy")


def better(name: str) -> Better:
    """The good direction of the figure called `name` (its last dotted part is read: `mi_mean`,
    `agent.usage.cost_usd`); `none` when it has none or is not known."""
    leaf = name.rsplit(".", 1)[-1].lower()
    words = leaf.split("_")
    if leaf.startswith(_HIGHER) or words[0] in _HIGHER:
        return "higher"
    if any(leaf.startswith(key) or key in words for key in _LOWER):
        return "lower"
    return "none"
