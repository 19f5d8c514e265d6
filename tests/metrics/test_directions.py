"""Each figure's good direction, which the viewer colours a change by."""

from __future__ import annotations

import pytest

from benchwright.metrics.directions import better


@pytest.mark.parametrize(("name", "direction"), [
    ("mi_mean", "higher"),  # a falling maintainability index is no improvement
    ("quality.values.mi_mean", "higher"),
    ("lint", "lower"), ("astgrep_weighted", "lower"), ("cc_high", "lower"),
    ("clone_ratio", "lower"), ("erosion", "lower"), ("rubric_per_loc", "lower"),
    ("agent.usage.cost_usd", "lower"), ("duration_s", "lower"),
    ("loc", "none"), ("sloc", "none"), ("files", "none"), ("symbols", "none"),
    ("something_new", "none"),
])
def test_directions(name: str, direction: str) -> None:
    assert better(name) == direction
