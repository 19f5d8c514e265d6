"""docs/performance.md has one row per bench, and each bench prints the row it owns
(`bench/perf_row.py`'s `print_row`, named after the script), so the page is kept true by running
the benches: a new bench without its row, or a row whose bench prints nothing, fails here."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"


def _benches() -> list[Path]:
    """The scripts of bench/ that run (a `__main__` block), not the modules they import."""
    return sorted(p for p in BENCH.glob("*.py") if 'if __name__ == "__main__":' in p.read_text())


def _rows_printed(script: Path) -> list[str]:
    """The bench names given to `print_row` in `script` (string literals only)."""
    names = []
    for node in ast.walk(ast.parse(script.read_text())):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "print_row" and node.args
                and isinstance(node.args[0], ast.Constant)):
            names.append(str(node.args[0].value))
    return names


def _table_benches() -> list[str]:
    """The first cell of each row of the page's table of benches."""
    lines = (ROOT / "docs" / "performance.md").read_text().splitlines()
    rows = [line for line in lines if line.startswith("| ") and ".py |" in line.split("|")[1] + "|"]
    return [row.split("|")[1].strip() for row in rows]


def test_every_bench_prints_its_own_row() -> None:
    benches = _benches()
    assert len(benches) >= 19
    assert {p.name: _rows_printed(p) for p in benches} == {p.name: [p.name] for p in benches}


def test_the_page_has_one_row_per_bench_and_no_other() -> None:
    assert sorted(_table_benches()) == [p.name for p in _benches()]
