"""The house style's size rule, kept true: functions are small (median under 12 lines, none over
60), so each reads at a glance."""

from __future__ import annotations

import ast
import statistics
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "benchwright"
MAX_LINES = 60
MEDIAN_BELOW = 12


def _sizes() -> dict[str, int]:
    sizes = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                where = f"{path.relative_to(SRC)}:{node.lineno} {node.name}"
                sizes[where] = (node.end_lineno or node.lineno) - node.lineno + 1
    return sizes


def test_no_function_is_over_sixty_lines_and_the_median_is_small() -> None:
    sizes = _sizes()
    assert len(sizes) > 1000
    assert {k: v for k, v in sizes.items() if v > MAX_LINES} == {}
    assert statistics.median(sizes.values()) < MEDIAN_BELOW
