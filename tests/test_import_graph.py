"""The layers of benchwright, read from its imports (issue 14).

Every `import` of a benchwright module in src/benchwright, at module level, inside a function or
under `if TYPE_CHECKING:`, is an edge. Each module gets a layer from the table below; an edge
may go to the same layer or a lower one, never up; no module imports the package it sits in;
and nothing forms a cycle: not the subpackages, and not two files of one folder. Names written
as strings (`benchwright.registry`'s "module:attribute") are not imports: that is how a lower
layer names a track without loading it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src"
PACKAGE = SRC / "benchwright"

# The first dotted prefix that matches gives a module's layer: higher layers may import lower.
LAYERS: dict[str, int] = {
    "benchwright.cli": 5,
    "benchwright.__main__": 5,
    "benchwright.api": 4,
    "benchwright.view": 4,
    "benchwright.coding": 3,
    "benchwright.web": 3,
    "benchwright.harbor": 3,
    "benchwright.runs": 2,
    "benchwright.executors": 2,
    # base: interfaces and their values, the registry of names, sandboxing, files, statistics,
    # prices, redaction, code metrics (an analysis of a folder), shared report parts, fakes
    "benchwright": 1,
}
# The package itself (`benchwright/__init__.py`) is the public facade: it names the API's
# modules for type checkers only and imports them on first use, so it sits above everything
# (`__version__` lives in benchwright.version, of the base layer: reading it goes no way up).
FACADE = "benchwright"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[:3] == ("coding", "problems", "bundled"):  # package data
            continue
        found[module_name(path)] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The benchwright modules `name` imports, anywhere in its file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("benchwright"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            if not base.startswith("benchwright"):
                continue
            for alias in node.names:
                name_ = f"{base}.{alias.name}"
                yield name_ if name_ in known else base


def edges() -> set[tuple[str, str]]:
    known = modules()
    return {(name, target) for name, path in known.items()
            for target in imported(name, path, known) if target != name}


def layer(name: str) -> int:
    if name == FACADE:
        return max(LAYERS.values()) + 1
    for prefix, level in LAYERS.items():
        if name == prefix or name.startswith(prefix + "."):
            return level
    raise AssertionError(f"{name} has no layer in LAYERS")


def unit(name: str, depth: int = 2) -> str:
    """The package (or module) `name` belongs to, `depth` dotted parts deep."""
    return ".".join(name.split(".")[:depth])


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo += graph.get(node, ())
    return seen


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of nodes that reach each other (each group is one or more cycles)."""
    reach = {node: reachable(graph, node) for node in graph}
    groups = {tuple(sorted({node} | {n for n in reach[node] if node in reach.get(n, ())}))
              for node in graph if node in reach[node]}
    return sorted(list(group) for group in groups)


def test_every_module_has_a_layer() -> None:
    for name in modules():
        layer(name)


def test_no_import_goes_up_a_layer() -> None:
    upward = sorted(f"{a} (layer {layer(a)}) -> {b} (layer {layer(b)})"
                    for a, b in edges() if layer(b) > layer(a))
    assert upward == []


@pytest.mark.parametrize("depth", [2, 3], ids=["subpackages", "their-subpackages"])
def test_no_cycle_between_subpackages(depth: int) -> None:
    # depth 2: coding, web, runs, sandbox...; depth 3: coding.agents, coding.runs, web.browser...
    graph: dict[str, set[str]] = {}
    for a, b in edges():
        if unit(a, depth) != unit(b, depth):
            graph.setdefault(unit(a, depth), set()).add(unit(b, depth))
    assert cycles(graph) == []


def test_no_cycle_between_modules() -> None:
    # two files of one folder importing each other (even for type checkers only) is a cycle too
    graph: dict[str, set[str]] = {}
    for a, b in edges():
        graph.setdefault(a, set()).add(b)
    assert cycles(graph) == []


def test_no_module_imports_its_own_package() -> None:
    # `from benchwright import x` in benchwright.y, or `from benchwright.runs import x` in
    # benchwright.runs.y where x is not a module: an import running back up to the front door
    found = sorted(f"{a} -> {b}" for a, b in edges() if a.startswith(b + "."))
    assert found == []


def test_the_kernel_imports_no_track() -> None:
    tracks = ("benchwright.coding", "benchwright.web", "benchwright.metrics",
              "benchwright.report_parts")
    found = sorted(f"{a} -> {b}" for a, b in edges()
                   if a.startswith("benchwright.runs") and b.startswith(tracks))
    assert found == []


def test_the_web_runner_loads_no_coding_module() -> None:
    code = ("import sys, benchwright.web.trials.runner; "
            "print([m for m in sys.modules if m.startswith('benchwright.coding')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]"


def test_importing_the_package_loads_nothing_else() -> None:
    code = ("import sys, benchwright; "
            "print(sorted(m for m in sys.modules if m.startswith('benchwright.') "
            "or m.split('.')[0] in ('pandas', 'browser_use', 'pydantic', 'typer', 'rich')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "['benchwright.version']"  # one constant


HEAVY = ("benchwright.coding", "benchwright.web", "benchwright.judge", "benchwright.metrics",
         "benchwright.view", "benchwright.api", "numpy", "pandas", "browser_use", "ray")


def _loaded_by(code: str) -> list[str]:
    # third-party packages by their top name, ours by subpackage (the API by module)
    code = (f"import sys\n{code}\nprint(sorted({{m.split('.')[0] if not m.startswith("
            f"'benchwright') else '.'.join(m.split('.')[:3 if m.startswith('benchwright.api') "
            f"else 2]) for m in sys.modules}}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    return [m for m in eval(out.stdout) if m.startswith(HEAVY)]


def test_the_cli_starts_without_loading_a_track() -> None:
    # every command runs through this start-up; a track is loaded by the command that uses it
    assert _loaded_by("import benchwright.cli.main") == []


def test_eval_checkpoint_loads_only_what_grading_needs() -> None:
    # its start-up is part of grading's overhead against plain pytest (bench/grade_overhead.py)
    loaded = _loaded_by("from benchwright.cli.main import app\n"
                        "from benchwright.cli.entry import command\n"
                        "command(app).commands['eval'].commands['checkpoint']")
    assert loaded == []  # not even the API (--executor's choices come from the registry)
    wanted = ("import benchwright.cli.eval_cmd, benchwright.api.grading, "
              "benchwright.coding.grading.grader")
    assert _loaded_by(wanted) == ["benchwright.api", "benchwright.api.grading",
                                  "benchwright.coding"]
    code = f"import sys\n{wanted}\nprint(sorted(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    runs_or_reports = ("benchwright.coding.attempts", "benchwright.coding.report",
                       "benchwright.coding.agents")
    assert [m for m in eval(out.stdout) if m.startswith(runs_or_reports)] == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    # the checks above pass on an empty graph too: show they can fail
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert layer("benchwright.runs.journal") < layer("benchwright.coding.attempts.chain")
