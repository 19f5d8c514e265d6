"""Code-quality metrics: radon parity on real files, clones, waste, graph, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import rich

from benchwright.errors import PrerequisiteError
from benchwright.metrics.graph import graph_metrics
from benchwright.metrics.languages.python import PythonAnalyzer
from benchwright.metrics.static import analyze_snapshot
from benchwright.metrics.tools import executable
from tests.helpers import FIXTURES, run_cli

# A corpus of real files: the rich package, a dependency of benchwright. Files over 1,500 lines
# are left out only because radon itself is too slow on them (quadratic) for a test.
CORPUS = [p for p in sorted(Path(rich.__file__).parent.glob("*.py"))
          if len(p.read_text().splitlines()) < 1500][:40]


def _radon(kind: str, files: list[Path]) -> dict[str, object]:
    radon = Path(sys.executable).with_name("radon")
    out = subprocess.run([str(radon), kind, "-j", *map(str, files)], capture_output=True,
                         text=True, check=True)
    data: dict[str, object] = json.loads(out.stdout)
    return data


def test_lines_mi_and_cc_equal_radons_on_real_files() -> None:
    raw, mi, cc = _radon("raw", CORPUS), _radon("mi", CORPUS), _radon("cc", CORPUS)
    analyzer = PythonAnalyzer()
    compared = 0
    for path in CORPUS:
        result = analyzer.analyze(path.name, path.read_text())
        assert result.metrics.lines.model_dump() == raw[str(path)]
        assert result.metrics.mi == pytest.approx(mi[str(path)]["mi"])  # type: ignore[index]
        ours = sorted((s.name, s.complexity, s.start, s.end) for s in result.symbols)
        theirs = sorted((f"{b['classname']}.{b['name']}" if b.get("classname") else b["name"],
                         b["complexity"], b["lineno"], b["endline"])
                        for b in cc.get(str(path), []))  # type: ignore[attr-defined]
        assert ours == theirs, path
        compared += len(ours)
    assert compared > 100


PLANTED = '''
def total_price(items, rate):
    result = 0
    for item in items:
        if item.price > 10:
            result += item.price * rate
    return result


def sum_costs(entries, factor):
    acc = 0
    for entry in entries:
        if entry.price > 99:
            acc += entry.price * factor
    return acc


def unrelated(x):
    while x > 0:
        x -= 1
        print(x)
    return x
'''
CLEAN = '''
def parse(text):
    parts = text.split(",")
    return [p.strip() for p in parts]


def render(rows):
    for row in rows:
        print(" | ".join(row))
    return len(rows)
'''


def test_clone_detector_finds_planted_clones_and_nothing_in_clean_code(tmp_path: Path) -> None:
    (tmp_path / "planted").mkdir()
    (tmp_path / "planted" / "a.py").write_text(PLANTED)
    (tmp_path / "planted" / "b.py").write_text(PLANTED.split("def unrelated")[0])
    metrics = analyze_snapshot(tmp_path / "planted", scbench=False)
    functions = [c for c in metrics.clones if c.kind == "functiondef"]
    assert len(functions) == 1 and len(functions[0].instances) == 4
    assert not any(c.kind == "for" for c in metrics.clones)  # nested blocks are not re-counted
    (tmp_path / "clean").mkdir()
    (tmp_path / "clean" / "a.py").write_text(CLEAN)
    assert analyze_snapshot(tmp_path / "clean", scbench=False).clones == []


WASTE = '''
def helper(x):
    return x + 1


def wrapper(x):
    """Calls helper."""
    return helper(x)


class OnlyOne:
    def __init__(self):
        self.n = 0

    def run(self):
        return self.n


def main():
    print(wrapper(1), OnlyOne().run())
'''


def test_waste(tmp_path: Path) -> None:
    (tmp_path / "w.py").write_text(WASTE)
    metrics = analyze_snapshot(tmp_path, scbench=False)
    assert "w.py:wrapper" in metrics.trivial_wrappers
    assert "w.py:main" not in metrics.trivial_wrappers
    assert set(metrics.single_use_functions) >= {"w.py:helper", "w.py:wrapper"}
    assert metrics.single_method_classes == ["w.py:OnlyOne"]


def test_graph_metrics_by_hand() -> None:
    edges = {"main.py": {"a.py", "b.py"}, "a.py": {"b.py"}, "b.py": {"a.py"}, "c.py": set()}
    sloc = {"main.py": 10, "a.py": 30, "b.py": 60, "c.py": 100}
    graph = graph_metrics("main.py", edges, sloc)
    assert (graph.modules, graph.edges) == (3, 4)
    assert graph.cyclic_dependency_mass == pytest.approx(90 / 100)
    assert graph.propagation_cost == pytest.approx((3 + 2 + 2) / 9, abs=1e-4)
    assert graph.dependency_entropy == pytest.approx(0.6309, abs=1e-3)  # fan-in 0, 2, 2


def test_snapshot_imports_resolve_from_the_entry_file(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "main.py").write_text("from pkg import core\nimport pkg.util\n")
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "core.py").write_text("from . import util\n")
    (tmp_path / "pkg" / "util.py").write_text("from .core import x\n")
    graph = analyze_snapshot(tmp_path, entry="main.py", scbench=False).graph
    assert graph.modules == 4
    assert graph.cyclic_dependency_mass > 0  # core <-> util


def test_missing_tool_says_how_to_install() -> None:
    with pytest.raises(PrerequisiteError, match=r"benchwright\[metrics\]"):
        executable("benchwright-no-such-tool")


def test_metrics_static_cli(tmp_path: Path) -> None:
    (tmp_path / "w.py").write_text(WASTE + textwrap.dedent("""
        def risky():
            try:
                return eval("1")
            except:
                pass
    """))
    proc = run_cli("metrics", "static", "--workspace", str(tmp_path), "--entry", "w.py",
                   "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["format"] == "benchwright.metrics/2"
    assert set(data["scbench"]["figures"]) >= {"verbosity", "erosion", "cog_erosion"}
    assert data["lint"] and data["astgrep"]["safety"] >= 1
    assert set(data["tools"]) == {"radon", "ruff", "ast-grep"}
    table = run_cli("metrics", "static", "--workspace", str(tmp_path))
    assert "maintainability" in table.stdout and "scb-check" in table.stdout
    bad = run_cli("metrics", "static", "--workspace", str(tmp_path / "nope"))
    assert bad.returncode == 2 and "workspace not found" in bad.stderr


ASTGREP_FIXTURES = FIXTURES / "astgrep"


def test_every_astgrep_rule_fires_on_its_positive_and_not_its_negative() -> None:
    from benchwright.metrics.astgrep import CATEGORIES, rule_table, rules_dir

    table = rule_table()
    assert len(table) >= 40
    assert {category for category, _ in table.values()} == set(CATEGORIES)
    out = subprocess.run([executable("ast-grep"), "scan", "-c", str(rules_dir() / "sgconfig.yml"),
                          "--json=stream", "."], cwd=ASTGREP_FIXTURES, capture_output=True,
                         text=True, check=True)
    hits = {(Path(f["file"]).parts[0], Path(f["file"]).stem, f["ruleId"])
            for f in map(json.loads, out.stdout.splitlines())}
    for rule in table:
        assert (rule, "positive", rule) in hits, f"{rule} misses its positive example"
        assert (rule, "negative", rule) not in hits, f"{rule} fires on its negative example"
